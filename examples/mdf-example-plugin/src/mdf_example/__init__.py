"""Example third-party mdf plugin."""
