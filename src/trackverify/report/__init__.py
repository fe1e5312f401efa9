"""Outputs a scientist reads: the JSON results and the self-contained HTML report."""
