"""The identity-free registration of ``registered_distance``: its speed against the float64
code it replaced and against pycpd, and the verdicts it leads to against that code's.

Frames: the development specimen as ``trackverify synth --frames 1000 --motion moderate``
writes it (189 ids, positions only), and the shipped real tracker output
(``examples/real-tracker/tracker_cpd.parquet``, 686 frames x 70 ids). Timed, CPU and wall,
best of ``--repeat``, one BLAS thread as the fit itself sets:

- ``fit_registration`` (this code) and ``tests/registration_reference.py``'s (the float64
  code before it, kept callable), on the same frames, alternately;
- pycpd 2.0.0's ``DeformableRegistration`` (``benchmarks/pycpd_reference.py`` in
  ``.venv-pycpd``, ``make .venv-pycpd``), frame by frame on the same unit-free detections,
  from the same start points (the start our fit chose for the frame), the same starting
  ``sigma^2``, ``w``, ``beta`` and ``lambda`` (pycpd's ``alpha``), and exactly as many EM
  steps as our fit took on that frame (pycpd's tolerance 0). What differs, as far as the two
  allow: pycpd's model is ``Y + G(Y) W`` with a full-rank kernel over its source points and a
  dense M x M solve; ours is ``a B^T + t + G(a) W`` (an affine part, the kernel over the
  anchor, low rank, Woodbury); pycpd has no global pose, no start choice, no ``sigma^2``
  floor, and stops on an absolute change of ``sigma^2`` (replaced here by the step counts).
  Both run with one BLAS thread (ours sets it; pycpd's environment is given it: with two
  threads on this 2-core machine its dense solves ran up to 12x slower under load). Our
  time includes all of our fit (pose, starts, every frame); pycpd's only its registrations.

Agreement: the new fit's positions against the reference's (max |difference| in um, and
relative to the anchor's RMS radius), sigma (max relative difference), the one-to-one
assignment (identical), and with ``--verdicts`` the audit's verdicts, reasons, events and
scores with either registration on the real output (the shipped example with and without
its detections; the fDNC recording from frame 0 and from frame 373) and a synthetic cohort
(two animals x 300 frames at every motion level, positions only, clean and with ids swapped
in pairs over frames 100-149; freely_moving also with its detection table).

    .venv/bin/python benchmarks/bench_registration.py [--frames 1000] [--repeat 3]
                                                     [--no-pycpd] [--verdicts]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import trackverify  # noqa: E402
import trackverify.verifiers.registered_distance as rd  # noqa: E402
from tests import registration_reference as reference  # noqa: E402
from trackverify.anchors import anchor_positions  # noqa: E402
from trackverify.synth.motion import MOTION_LEVELS  # noqa: E402
from trackverify.synth.specimen import (SpecimenConfig, animal_detections,  # noqa: E402
                                         animal_observations)

PYCPD = ROOT / ".venv-pycpd" / "bin" / "python"
EXAMPLE = ROOT / "examples" / "real-tracker"
FDNC = ROOT.parent / "shared" / "data" / "fdnc-nerve-freely-moving"
COORDS = ["x_um", "y_um", "z_um"]


def specimen(frames: int, motion: str = "moderate", animal: int = 0, seed: int = 20261007,
             animals: int = 1) -> pd.DataFrame:
    """The specimen's observations as ``trackverify synth`` writes them, positions only."""
    config = SpecimenConfig(animals=animals, frames=frames, motion=motion, seed=seed)
    return animal_observations(config, animal).drop(columns=["track", "detection"])


def example() -> pd.DataFrame:
    table = pd.read_parquet(EXAMPLE / "tracker_cpd.parquet")
    return table.assign(pred_valid=table["pred_id"].notna())


def timed(function, *args) -> tuple[float, float, object]:
    wall, cpu = time.perf_counter(), time.process_time()
    out = function(*args)
    return time.perf_counter() - wall, time.process_time() - cpu, out


def compare_fits(name: str, table: pd.DataFrame, repeat: int, pycpd: bool) -> None:
    _, anchor = anchor_positions(table)
    detections = table[["frame", *COORDS]].dropna()
    runs = {"fast": [], "reference": []}
    for _ in range(repeat):  # alternately, so that a change of load meets both
        runs["fast"].append(timed(rd.fit_registration, anchor, detections))
        runs["reference"].append(timed(reference.fit_registration, anchor, detections))
    new, old = runs["fast"][0][2], runs["reference"][0][2]
    best = {k: (min(r[0] for r in v), min(r[1] for r in v)) for k, v in runs.items()}
    ok = np.isfinite(old.positions)
    radius = float(np.sqrt(((anchor - anchor.mean(axis=0)) ** 2).sum(axis=1).mean()))
    gap = float(np.abs(new.positions - old.positions)[ok].max())
    sigma = np.isfinite(old.sigma) & (old.sigma > 0)
    print(f"\n{name}: {len(anchor)} anchor ids, {detections['frame'].nunique()} frames, "
          f"{len(detections):,} detections")
    print(f"  fit_registration (this code)  {best['fast'][1]:6.2f} s CPU  {best['fast'][0]:6.2f} s "
          f"wall   (best of {repeat})")
    print(f"  reference (float64, before)   {best['reference'][1]:6.2f} s CPU  "
          f"{best['reference'][0]:6.2f} s wall   -> {best['reference'][1] / best['fast'][1]:.2f}x "
          f"CPU, {best['reference'][0] / best['fast'][0]:.2f}x wall")
    print(f"  agreement: positions max |diff| {gap:.2e} um ({gap / radius:.1e} RMS radii), sigma max "
          f"rel diff {np.max(np.abs(new.sigma - old.sigma)[sigma] / old.sigma[sigma]):.1e}, "
          f"unregistered frames equal: {np.array_equal(np.isfinite(new.sigma), np.isfinite(old.sigma))}")
    frames = detections["frame"].to_numpy()
    points = detections[COORDS[:anchor.shape[1]]].to_numpy()
    cap = rd.anchor_spacing(anchor)
    wall_a, cpu_a, got = timed(rd.assign_detections, new.positions, frames, points, cap)
    wall_b, cpu_b, expected = timed(reference.assign_detections, new.positions, frames, points, cap)
    same = all(np.array_equal(a, b) for a, b in zip(got, expected))
    print(f"  assign_detections {cpu_a:.2f} s CPU against {cpu_b:.2f} s ({cpu_b / cpu_a:.2f}x); "
          f"the same assignment: {same}")
    if pycpd:
        against_pycpd(anchor, detections, best["fast"])


class FrameLog:
    """The unit-free detections, start, starting sigma^2 and EM steps of every frame our fit
    registers (wrapping ``_register_frame`` and counting ``_expectation``)."""

    def __init__(self):
        self.frames, self.steps = [], 0
        self._register, self._expect = rd._register_frame, rd._expectation

    def __enter__(self):
        def register(a, gram, x, start, sigma2, *args, **kwargs):
            before = self.steps
            out = self._register(a, gram, x, start, sigma2, *args, **kwargs)
            self.frames.append((x, start, sigma2, self.steps - before, args[2]))
            return out

        def expect(*args, **kwargs):
            self.steps += 1
            return self._expect(*args, **kwargs)
        rd._register_frame, rd._expectation = register, expect
        return self

    def __exit__(self, *exc):
        rd._register_frame, rd._expectation = self._register, self._expect


def against_pycpd(anchor: np.ndarray, detections: pd.DataFrame, ours: tuple[float, float]) -> None:
    if not PYCPD.exists():
        print("  pycpd: build its environment first (make .venv-pycpd)")
        return
    settings = rd.RegistrationSettings()
    with FrameLog() as log:
        rd.fit_registration(anchor, detections)
    arrays = {"sigma2": np.array([f[2] for f in log.frames]),
              "iterations": np.array([f[3] for f in log.frames]),
              "w": log.frames[0][4], "beta": settings.beta, "lam": settings.lam}
    for k, (x, start, *_rest) in enumerate(log.frames):
        arrays[f"x_{k}"], arrays[f"y_{k}"] = x, start
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "frames.npz"
        np.savez(path, **arrays)
        threads = {k: "1" for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                     "MKL_NUM_THREADS")}
        done = subprocess.run([str(PYCPD), str(ROOT / "benchmarks" / "pycpd_reference.py"),
                               str(path)], capture_output=True, text=True, check=True,
                              env=dict(os.environ, **threads))
    theirs = json.loads(done.stdout)
    print(f"  pycpd DeformableRegistration: {theirs['cpu']:6.2f} s CPU  {theirs['wall']:6.2f} s "
          f"wall over {theirs['frames']} frames, {theirs['steps']} EM steps (ours: "
          f"{int(arrays['iterations'].sum())}) -> this code is {theirs['cpu'] / ours[1]:.1f}x "
          f"faster in CPU, {theirs['wall'] / ours[0]:.1f}x in wall time; pycpd's points lie "
          f"{theirs['nearest']:.3f} RMS radii from their nearest detection on average")


def swapped(table: pd.DataFrame) -> pd.DataFrame:
    """Ids swapped in pairs (the 20 smallest) over frames 100-149 of each recording."""
    table = table.copy()
    ids = np.sort(table["pred_id"].unique())
    pairs = dict(zip(ids[0:20:2], ids[1:20:2])) | dict(zip(ids[1:20:2], ids[0:20:2]))
    window = table["frame"].between(100, 149).to_numpy()
    table.loc[window, "pred_id"] = table.loc[window, "pred_id"].map(lambda p: pairs.get(p, p))
    return table


def verdict_cases():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from audit_real import load  # the fDNC tracker output as audit_real.py reads it

    yield "example", (EXAMPLE / "tracker_cpd.parquet",), {}
    yield "example + detections", (EXAMPLE / "tracker_cpd.parquet",
                                   EXAMPLE / "detections.parquet"), {}
    if FDNC.exists():
        tracks, detections, _ = load(FDNC)
        yield "fdnc", (tracks,), {}
        yield "fdnc + detections", (tracks, detections), {}
        tracks, detections, _ = load(FDNC, 373)
        yield "fdnc from frame 373", (tracks, detections), {"anchor_frame": 373}
    for motion in sorted(MOTION_LEVELS):
        config = SpecimenConfig(animals=2, frames=300, motion=motion, seed=7)
        full = pd.concat([animal_observations(config, k) for k in range(2)], ignore_index=True)
        positions = full.drop(columns=["track", "detection"])
        yield f"specimen {motion}", (positions,), {}
        yield f"specimen {motion}, swapped", (swapped(positions),), {}
        if animal_detections(config, 0) is not None:  # a level with a detection table
            detections = pd.concat([animal_detections(config, k) for k in range(2)],
                                   ignore_index=True)
            yield f"specimen {motion} + detections", (full.drop(columns=["track"]),
                                                      detections), {}


def compare_verdicts() -> bool:
    print("\naudit verdicts with this registration against the reference's:")
    fast = (rd.fit_registration, rd.assign_detections)
    same_everywhere = True
    for name, args, options in verdict_cases():
        rd.fit_registration, rd.assign_detections = fast
        new = trackverify.audit(*args, **options).observations
        rd.fit_registration, rd.assign_detections = (reference.fit_registration,
                                                     reference.assign_detections)
        try:
            old = trackverify.audit(*args, **options).observations
        finally:
            rd.fit_registration, rd.assign_detections = fast
        equal = all(new[c].equals(old[c]) for c in ("verdict", "reason", "event", "segment",
                                                    "lookalike_id"))
        score = np.nanmax(np.abs(new["score"].to_numpy(float) - old["score"].to_numpy(float)))
        counts = new["verdict"].value_counts().to_dict()
        print(f"  {name:32s} {len(new):7,} rows {counts}: verdicts, reasons, events "
              f"{'identical' if equal else 'DIFFER'}; scores max |diff| {score:.1e} um")
        same_everywhere &= equal
    return same_everywhere


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-pycpd", action="store_true")
    parser.add_argument("--verdicts", action="store_true",
                        help="also compare the audit's verdicts on the real and synthetic cases")
    args = parser.parse_args()
    compare_fits(f"specimen, moderate, {args.frames} frames", specimen(args.frames),
                 args.repeat, not args.no_pycpd)
    compare_fits("shipped real tracker output", example(), args.repeat, not args.no_pycpd)
    if args.verdicts and not compare_verdicts():
        sys.exit("verdicts differ")


if __name__ == "__main__":
    main()
