"""``ptrnet serve``: the local web page (FastAPI + uvicorn), see docs/web.md.

Models are loaded once, at start, from the command line (``--model TASK=PATH``, PATH a run
directory or checkpoint) and, for tasks without one, from the bundled defaults in
``ptrnet/bundled/<task>/`` when that folder holds a checkpoint. A task without a model still
gets the exact solution on the page. The server never loads a path that came from a request.
A connection that sends no complete request head within 5 s is closed; at most 32 connections
per client address (the longest-waiting one makes room for a new one), 256 in all (docs/web.md).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ptrnet.cli.common import add_device_argument, load_model_on, routes_text
from ptrnet.io.errors import UsageError
from ptrnet.quoting import quote
from ptrnet.tasks import POINT_TASKS


def allowed_hosts(args: argparse.Namespace) -> tuple[str, ...]:
    """The Host names the server answers for: localhost's, ``--host`` and ``--allow-host``."""
    from ptrnet.web.guard import DEFAULT_HOSTS, host_name

    extra = [host_name(h) for h in [args.host, *args.allow_host] if h not in ("0.0.0.0", "::")]
    return tuple(dict.fromkeys([*DEFAULT_HOSTS, *extra]))


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="local web page: draw instances, see the model's answer, train live",
        description=__doc__.split("\n\n", 1)[1],
    )
    parser.add_argument("--host", default="127.0.0.1", help="interface (default: %(default)s)")
    parser.add_argument(
        "--port", type=port_number, default=8000, help="port (default: %(default)s)"
    )
    parser.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="also answer requests whose Host is NAME (repeatable); by default only localhost, "
        "127.0.0.1, ::1 and --host, which defeats DNS rebinding",
    )
    parser.add_argument(
        "--model",
        action="append",
        default=[],
        metavar="TASK=PATH",
        help="model for TASK (repeatable): a run directory, a checkpoint file or 'bundled' "
        "(default: each task's bundled model)",
    )
    add_device_argument(parser)
    parser.set_defaults(run=run)


def parse_model_spec(spec: str) -> tuple[str, str]:
    """``TASK=PATH`` -> (task, path). Raises UsageError on a bad form or an unknown task."""
    task, sep, path = spec.partition("=")
    if not sep or not path:
        raise UsageError(f"--model {quote(spec)}: expected TASK=PATH, e.g. convex_hull=runs/hull")
    if task not in POINT_TASKS:
        raise UsageError(
            f"--model {quote(spec)}: unknown task {quote(task)}; "
            f"choose from {', '.join(POINT_TASKS)}"
        )
    return task, path


def bundled_path(task: str) -> str | None:
    """``ptrnet/bundled/<task>/`` if it exists and holds a file, else None."""
    from ptrnet.inference import bundled_model_dir

    folder = Path(bundled_model_dir(task))
    return str(folder) if folder.is_dir() and any(folder.iterdir()) else None


def load_models(specs: list[str], device: str = "cpu") -> dict:
    """Task -> LoadedModel: the ``--model`` ones, then bundled defaults for the other tasks.

    Raises:
        UsageError: a bad spec, two models for one task, or a model of another task.
        InputError: a missing or unreadable model.
    """
    paths: dict[str, str] = {}
    for spec in specs:
        task, path = parse_model_spec(spec)
        if task in paths:
            raise UsageError(f"--model given twice for {task}")
        paths[task] = path
    for task in POINT_TASKS:
        if task not in paths and (bundled := bundled_path(task)) is not None:
            paths[task] = bundled
    return {task: load_model_on(path, task, device) for task, path in paths.items()}


def port_number(text: str) -> int:
    """A TCP port, 0-65535 (0: one the system picks); argparse's type for ``--port``."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {quote(text)}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port {port} is outside 0-65535")
    return port


def run(args: argparse.Namespace) -> int:
    try:
        import uvicorn

        from ptrnet.web.app import create_app
        from ptrnet.web.connections import server_options
        from ptrnet.web.guard import GuardLimits
    except ImportError as err:
        raise UsageError(
            f"the web page needs fastapi, uvicorn and pydantic ({err.name} is missing), which "
            "installing ptrnet brings: pip install fastapi uvicorn pydantic, or install ptrnet "
            "again (in a clone's folder: pip install -e .; from a wheel: pip install WHEEL)"
        ) from None
    models = load_models(args.model, args.device)
    for task in POINT_TASKS:
        where = "none (exact only)"
        if task in models:
            where = os.path.relpath(models[task].path) + routes_text(models[task], os.path.relpath)
        print(f"ptrnet: {task}: model {where}", file=sys.stderr)
    app = create_app(models, limits=GuardLimits(hosts=allowed_hosts(args)))
    print(f"ptrnet: serving on http://{args.host}:{args.port} (Ctrl-C stops)", file=sys.stderr)
    # Connection limits (head timeout, per-client cap): ptrnet.web.connections, docs/web.md.
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning", **server_options())
    return 0
