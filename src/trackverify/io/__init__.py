"""Reading and writing: tables (CSV, Parquet), trackers' formats, atomic outputs, safe pickles, NWB."""
