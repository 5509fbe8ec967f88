"""mdf-dedup: ``exact_dedup`` and ``minhash_dedup``, streaming or cluster mode, on mdf's key-state service."""
