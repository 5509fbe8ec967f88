"""Megatron-Core's indexed dataset format: writing it, reading it, and mixing several of them to a token budget."""
