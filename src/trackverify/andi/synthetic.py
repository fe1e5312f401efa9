"""Synthetic AnDi 2 reference labels and noisy submissions in the CodaLab layout.

Used by the tests and the benchmark; not a model of diffusion, only of the label
format: trajectories with 0-3 changepoints, per-segment alpha, D and state, and
predictions that jitter changepoints, miss or add some, and perturb the values.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np


def make_labels(n: int, T: int = 200, seed: int = 0, start: int = 0) -> list[list[float]]:
    """``n`` reference lines ``idx, D, alpha, state, cp, ..., T``."""
    rng = np.random.default_rng(seed)
    lines = []
    for k in range(n):
        ncp = int(rng.integers(0, 4))
        cps = np.sort(rng.choice(np.arange(5, T - 5), size=ncp, replace=False)) if ncp else []
        row = [float(start + k)]
        for c in list(cps) + [T]:
            row += [float(10 ** rng.uniform(-2, 1)), float(np.round(rng.uniform(0.1, 1.9), 3)),
                    float(rng.integers(0, 4)), float(c)]
        lines.append(row)
    return lines


def perturb(lines: list[list[float]], seed: int = 1, drop: float = 0.0) -> list[list[float]]:
    """Noisy predictions of ``lines``; a fraction ``drop`` of trajectories is left out."""
    rng = np.random.default_rng(seed)
    out = []
    for row in lines:
        if rng.random() < drop:
            continue
        T = row[-1]
        cps = [c for c in row[4::4][:-1] if rng.random() > 0.15]
        cps = [float(min(max(c + rng.integers(-6, 7), 1), T - 1)) for c in cps]
        if rng.random() < 0.2:
            cps.append(float(rng.integers(1, int(T))))
        cps = sorted(set(cps))
        new = [row[0]]
        for c in cps + [T]:
            new += [float(10 ** rng.uniform(-2, 1)), float(np.round(rng.uniform(0, 2), 3)),
                    float(rng.integers(0, 4)), c]
        out.append(new)
    return out


def write_lines(path: Path, lines) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(",".join(repr(v) if not float(v).is_integer() else str(int(v))
                                     for v in row) + "\n" for row in lines))


def make_challenge(root: Path, n_per_fov: int, *, experiments: int = 2, fovs: int = 2,
                   T: int = 200, seed: int = 0, drop: float = 0.0, tracks=(2,)) -> Path:
    """Write ``root/ref`` and ``root/res`` for the given tracks; returns ``root``."""
    rng = np.random.default_rng(seed)
    for track in tracks:
        for exp in range(experiments):
            ref = root / "ref" / f"track_{track}" / f"exp_{exp}"
            res = root / "res" / f"track_{track}" / f"exp_{exp}"
            for fov in range(fovs):
                labels = make_labels(n_per_fov, T, int(rng.integers(1 << 30)))
                write_lines(ref / f"traj_labs_fov_{fov}.txt", labels)
                write_lines(res / f"fov_{fov}.txt",
                            perturb(labels, int(rng.integers(1 << 30)), drop))
                if track == 1:
                    (ref / f"vip_idx_fov_{fov}.txt").write_text(
                        "".join(f"{int(r[0])}\n" for r in labels))
            nst = int(rng.integers(1, 4))
            for folder, scale in ((ref, 0.0), (res, 0.1)):
                ens = np.vstack([rng.uniform(0.2, 1.8, nst), rng.uniform(0.01, 0.3, nst),
                                 10 ** rng.uniform(-1, 1, nst), rng.uniform(0.01, 0.5, nst),
                                 rng.integers(50, 200, nst).astype(float)])
                ens[:4] += scale * rng.normal(size=ens[:4].shape) * ens[:4]
                ens[[1, 3]] = np.abs(ens[[1, 3]])
                with open(folder / "ensemble_labels.txt", "w") as f:
                    f.write(f"model: multi_state; num_state: {nst} \n")
                    np.savetxt(f, ens, delimiter=";")
    return root
