"""The three protocols of the benchmark (SPEC section 2), one module each."""
