"""Reading and writing: tables (CSV, Parquet), atomic outputs, safe pickles, NWB."""
