"""Run andi-datasets 2.1.13 on cases given as JSON on stdin; print JSON results.

Executed with the reference environment's interpreter (.venv-andi/bin/python), never
imported by the test suite. Each case is {"fn": name, "args": [...], "kwargs": {...}};
the result is {"ok": value} or {"error": exception class name}. ``time_*`` cases time
the call inside this process.
"""
import json
import sys
import time
import warnings

import numpy as np
import pandas as pd

warnings.simplefilter("ignore")
u = None  # andi_datasets.utils_challenge, imported in main() (only in the reference env)


def plain(v):
    if isinstance(v, pd.DataFrame):
        return {"__df__": json.loads(v.to_json(orient="split"))}
    if isinstance(v, np.ndarray):
        return [plain(x) for x in v.tolist()]
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, (np.floating, float)):
        v = float(v)
        return v if np.isfinite(v) else str(v)
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, np.bool_):
        return bool(v)
    return v


def arg(v):
    if isinstance(v, dict) and "__array__" in v:
        return np.asarray(v["__array__"], dtype=v.get("dtype"))
    if isinstance(v, dict) and "__df__" in v:
        d = v["__df__"]
        return pd.DataFrame({c: d[c] for c in d})
    if isinstance(v, dict) and "__file__" in v:
        return u.load_file_to_df(v["__file__"])
    if isinstance(v, dict) and "__df_csv__" in v:
        return pd.read_csv(v["__df_csv__"])
    if isinstance(v, dict) and "__dict__" in v:
        return {k: arg(x) for k, x in v["__dict__"].items()}
    if isinstance(v, list):
        return [arg(x) for x in v]
    return v


def main():
    global u
    from andi_datasets import utils_challenge
    u = utils_challenge
    cases = json.load(sys.stdin)
    out = []
    for case in cases:
        fn = getattr(u, case["fn"])
        args = [arg(a) for a in case.get("args", [])]
        kwargs = {k: arg(v) for k, v in case.get("kwargs", {}).items()}
        if "seed" in case:
            np.random.seed(case["seed"])
        try:
            t0 = time.perf_counter()
            res = fn(*args, **kwargs)
            dt = time.perf_counter() - t0
            item = {"ok": plain(res), "seconds": dt}
            if case.get("return_args"):
                item["args_after"] = plain(args)
            out.append(item)
        except Exception as exc:  # the reference's own failure is a result too
            out.append({"error": type(exc).__name__, "message": str(exc)[:200]})
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
