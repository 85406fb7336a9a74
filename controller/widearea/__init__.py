"""Wide-area links: what a property and central say, and how each judges it (docs/wide-area.md)."""
