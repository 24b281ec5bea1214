"""The one inference API: load a trained model (:mod:`.load`), decode instances
(:mod:`.predict`). The CLI (``ptrnet eval``, ``ptrnet predict``), the Python API and the web page
are thin shells over :func:`load_model` and :func:`predict_outputs`.
"""

from ptrnet.inference.load import (
    BUNDLED,
    SIZES_JSON,
    LoadedModel,
    SizeRoute,
    bundled_model_dir,
    check_task,
    load_model,
    model_directory,
    read_size_routes,
    resolve_checkpoint,
)
from ptrnet.inference.predict import (
    check_vocabulary,
    predict,
    predict_outputs,
    served_options,
    size_groups,
)

__all__ = [
    "BUNDLED",
    "LoadedModel",
    "SIZES_JSON",
    "SizeRoute",
    "bundled_model_dir",
    "check_task",
    "check_vocabulary",
    "load_model",
    "model_directory",
    "predict",
    "predict_outputs",
    "read_size_routes",
    "resolve_checkpoint",
    "served_options",
    "size_groups",
]
