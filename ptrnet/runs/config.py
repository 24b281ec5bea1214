"""Training configuration: frozen, validated dataclasses saved inside every checkpoint.

A :class:`RunConfig` is everything that defines a run: the model (:class:`ModelConfig`) and the
training recipe (:class:`TrainConfig`). Both reject unknown keys and impossible values (a
misspelt option must not be silently ignored), and ``RunConfig.from_dict(cfg.to_dict()) == cfg``.

Recipes (Sec. 4, and what public replications found):

* ``sgd``: the paper's SGD, learning rate 1.0, no schedule.
* ``adam``: Adam, learning rate 1e-3, exponential decay ``lr * decay ** (step / decay_every)``
  (0.96 per 1000 steps unless set), the recipe that got further than SGD in public replications.

Both clip the global gradient L2 norm at 2.0 and use batch 128 unless set.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from ptrnet.compute.devices import check_device_name
from ptrnet.compute.precision import PRECISIONS
from ptrnet.decoding.options import CONSTRAINTS
from ptrnet.model.config import PERMUTATION_DECODERS, ModelConfig
from ptrnet.quoting import did_you_mean, quote
from ptrnet.runs.shared import (
    DEFAULTS,
    MAX_THREADS,
    check_shared,
    is_int,
    is_number,
    positive_float,
    positive_int,
)
from ptrnet.tasks import POINT_TASKS, SizeRange, Task, get_point_task, get_task
from ptrnet.tasks.knapsack import CapacitySpec

DEFAULT_STEPS = 10_000  # a run's length when neither steps nor epochs is given
OPTIMIZERS = ("sgd", "adam")
DEFAULT_LR = {"sgd": 1.0, "adam": 1e-3}
DEFAULT_DECAY = {"sgd": 1.0, "adam": 0.96}
LABELS = ("solve", "file")
OBJECTIVES = ("likelihood", "reinforce", "dagger")
BASELINES = ("samples", "rollout", "ema", "pomo")
OPENINGS = ("sampled", "greedy")  # whose costs train a forced first choice (learn_opening)


def capacity_text(task: Task, capacity: str | float | None) -> str | None:
    """``capacity`` (:attr:`TrainConfig.capacity`) as the text a config keeps, checked by
    :meth:`CapacitySpec.parse` (None stays None).

    Raises:
        ValueError: one line naming ``capacity``: a task without one, or a value
            :meth:`CapacitySpec.parse` refuses.
    """
    if capacity is None:
        return None
    if not task.capacity_column:
        raise ValueError(f"capacity: task {task.name} has no capacity (knapsack has)")
    if isinstance(capacity, bool) or not isinstance(capacity, (str, int, float)):
        raise ValueError(
            f"capacity: expected a number or a text such as '10%-50%', got {quote(capacity)}"
        )
    text = str(capacity)  # the saved config's JSON: 2.5 -> "2.5"
    try:
        CapacitySpec.parse(text)
    except ValueError as err:
        raise ValueError(f"capacity: {err}") from None
    return text


@dataclass(frozen=True)
class TrainConfig:
    """How to train.

    Attributes:
        task: registry name (``sort``, ``convex_hull``, ``delaunay``, ``tsp``).
        sizes: instance sizes, ``"5"`` or ``"5-50"``; each training instance draws n uniformly.
        capacity: knapsack: the capacity every *generated* instance states (training stream
            and validation set), as ``ptrnet generate knapsack --capacity`` takes it: a number,
            a share of the instance's total weight (``"30%"``) or a range of shares drawn per
            instance (``"10%-50%"``), kept as text (a number as ``str``); None = Bello et al.'s
            ``min(n / 4, 25)``, stated by none. Needs a model that reads capacities
            (``features`` ``capacity``); file instances (``data``, ``val_data``) state their own.
        data: paper-format training file, or None to generate fresh data on the fly.
        labels: ``solve`` = targets from ``task.solve`` (the canonical ones); ``file`` = the
            file's own labels (e.g. the paper's A1-labelled TSP-50).
        label_solver: the solver ``task.solve`` labels training instances with (one of the
            task's ``solvers``, e.g. TSP's ``local``: near-exact and 20-50 times faster than
            ``exact`` at n = 20); None = the task's default. Validation labels keep the default.
        optimizer: ``sgd`` or ``adam``; ``lr`` and ``decay`` default per recipe (module doc).
        lr, decay, decay_every: learning rate ``lr * decay ** (step / decay_every)``.
        warmup: the learning rate rises linearly from ``lr / warmup`` to the schedule's value
            over the first ``warmup`` steps (0 = off). For fine-tunes: Adam starts with no
            moment estimates, and its first full-size steps can undo part of the start model.
        clip_norm: global gradient L2 norm limit.
        ema: 0 = off (the paper); d in (0, 1) = validate and keep an exponential moving
            average of the weights, ``d`` per step (:mod:`ptrnet.training.ema`; 0.999 averages
            about the last 1,000 steps).
        batch_size: instances per step (B).
        steps, epochs: run length; exactly one is set. An epoch is ``epoch_size`` generated
            instances (all fresh) or one pass over ``data``.
        epoch_size: instances per generated epoch (paper: 1M training pairs).
        bucket: sort each pool of ``bucket_pool`` batches by n so a batch mixes fewer sizes
            (less padding, faster); the order of batches within a pool is shuffled.
        augment: show every training instance in a random input order and, for the planar
            tasks, one of the 8 symmetries of the unit square, drawn afresh per epoch; the
            label is relabelled to match, not solved again (:mod:`ptrnet.training.augment`).
        val_count, val_every: validation set size (of generated instances) and interval in
            steps.
        val_data: paper-format file of validation instances (labels from the file where it has
            them, else from ``task.solve``); None = ``val_count`` generated instances.
        val_constraints: decoding constraints for validation; None = the task's default.
        train_constraints: ``none`` (the paper): the teacher-forced softmax runs over every
            input, so the model must also learn the task's rules; ``task``: it runs only over
            the tokens the task's rules allow after the label prefix (the mask a constrained
            decoder applies), so training and constrained decoding see the same choices.
        objective: ``likelihood`` (the paper): teacher-forced maximum likelihood of the labels;
            ``reinforce``: policy gradient on the task's cost (tasks with ``has_cost``: TSP's
            tour length, sort's and hull's distances from the answer) without labels:
            ``rl_samples`` outputs sampled per instance under the task's rules, each weighted
            by its cost minus a baseline (:mod:`ptrnet.training.losses`); from scratch or
            from ``init_from``. Generated training instances are then not solved (validation
            still is).
            ``dagger``: imitation on the model's own states: the model's greedy outputs feed
            teacher forcing, and each drawn step is scored against the expert's next move
            from the model's prefix there (``task.complete``, by ``label_solver``;
            :mod:`ptrnet.training.dagger`; tasks with ``completable``: TSP; n >= 3).
            Generated training instances are solved only there.
        rl_samples: outputs sampled per instance with ``reinforce`` (at least 2).
        label_steps: 0 = teacher-force every step of every label (the paper); k > 0 = only k
            random steps of each label per training step (the heavy decoder only, whose steps
            share no recurrence: a step with c inputs left costs one attention pass over c + 2
            vectors, so k steps of many labels see more instances per second than every step
            of few; LEHD trains on random parts of each label too).
        shared_label_steps: with ``label_steps`` k: every row of a batch takes the same k
            distances from the end of its label (:func:`ptrnet.training.losses.sample_label_steps`),
            not its own k steps, so rows of equal length have equal numbers of inputs left
            and each distance runs as one attention pass of the whole batch. Faster per row
            with ``bucket`` (rows of similar length); a row shorter than a drawn distance
            trains on fewer than k steps.
        baseline: what ``reinforce`` compares each sample's cost with
            (:mod:`ptrnet.training.baselines`): ``samples`` (the instance's other samples),
            ``rollout`` (a frozen greedy copy, Kool et al. 2019), ``ema`` (a moving average of
            the batch costs) or ``pomo`` (one sample from every start, their mean; Kwon et al.
            2020).
        baseline_beta: the ``ema`` baseline's decay per step, in [0, 1).
        learn_opening: with ``pomo`` on a task whose first input keeps its place (CVRP: each
            run forced to serve its own customer first), also train the network's own first
            choice, the one a single greedy run makes, on the starts' costs
            (:func:`ptrnet.training.losses.opening_loss`); POMO alone never trains it.
        opening_rollouts: with ``learn_opening``, whose costs train the first choice: the
            ``sampled`` runs' or a ``greedy`` run's from each start (one more decoding per
            step, without gradient; the costs greedy decoding meets, without sampling noise).
        baseline_every, baseline_count: the ``rollout`` baseline's test interval in steps and
            held-out set size.
        log_every: steps between CSV rows.
        keep_every: keep the weights of every validation at a multiple of this many steps
            (``kept/step-STEP.safetensors``, :func:`ptrnet.runs.kept_path`); 0 = off. A multiple
            of ``val_every``: weights are kept at validations only.
        init_from: checkpoint file whose weights start the run (fine-tuning, e.g. a bundled
            model with another loss or data); None = the initialisation ``model.init`` names.
            The optimiser, data order and step count start fresh. Named as
            :func:`ptrnet.runs.recorded_path` names it (relative to the run directory's parent,
            else to the folder holding the package, else absolute) and found again by
            :func:`ptrnet.runs.recorded_file`, so a committed run names no folder of the
            machine it was trained on.
        seed: seeds the model init (torch) and all data (instance keys, epoch order).
        threads: torch CPU threads; None = the cores that other processes leave idle minus
            one per data worker, at least 1 (:func:`ptrnet.training.cpu.cpu_plan`), so nothing
            competes for a core with a torch thread.
        workers: processes that build training batches ahead of the step; 0 = build them in
            this process between steps; None = one per 4 idle cores. The data do not depend on
            it.
        device: ``auto`` (a CUDA GPU if torch sees one, else the CPU), ``cpu``, ``cuda`` or
            ``cuda:N`` (:mod:`ptrnet.compute.devices`).
        precision: ``auto``, ``fp32`` or ``bf16`` (:mod:`ptrnet.compute.precision`); ``auto`` = bf16
            autocast where the device computes bf16 natively, except for a model with attention
            layers on a CPU (fp32: faster there).
    """

    task: str
    sizes: str
    capacity: str | None = None
    data: str | None = None
    labels: str = "solve"
    label_solver: str | None = None
    optimizer: str = "adam"
    lr: float | None = None
    decay: float | None = None
    decay_every: int = 1000
    warmup: int = 0
    clip_norm: float = DEFAULTS["clip_norm"]
    ema: float = 0.0
    batch_size: int = 128
    steps: int | None = None
    epochs: int | None = None
    epoch_size: int = 1_000_000
    bucket: bool = False
    bucket_pool: int = 8
    augment: bool = False
    val_count: int = 1000
    val_every: int = 500
    val_data: str | None = None
    val_constraints: str | None = None
    train_constraints: str = "none"
    objective: str = "likelihood"
    rl_samples: int = 8
    label_steps: int = 0
    shared_label_steps: bool = False
    baseline: str = "samples"
    baseline_beta: float = 0.8
    learn_opening: bool = False
    opening_rollouts: str = "sampled"
    baseline_every: int = 100
    baseline_count: int = 256
    log_every: int = DEFAULTS["log_every"]
    keep_every: int = DEFAULTS["keep_every"]
    init_from: str | None = None
    seed: int = 0
    threads: int | None = None
    workers: int | None = None
    precision: str = "auto"
    device: str = "auto"

    def __post_init__(self) -> None:
        task = get_point_task(self.task, "a Ptr-Net training run")  # raises on an unknown task
        if not isinstance(self.sizes, str):
            raise ValueError(f"sizes must be a string like '5-50', got {quote(self.sizes)}")
        task.check_sizes(SizeRange.parse(self.sizes))
        object.__setattr__(self, "capacity", capacity_text(task, self.capacity))
        _choice("optimizer", self.optimizer, OPTIMIZERS)
        _choice("labels", self.labels, LABELS)
        if self.label_solver is not None:
            task.check_solver(self.label_solver)
        check_device_name(self.device)
        _choice("precision", self.precision, PRECISIONS)
        if self.val_constraints is not None:
            _choice("val_constraints", self.val_constraints, CONSTRAINTS)
        _choice("train_constraints", self.train_constraints, CONSTRAINTS)
        _choice("objective", self.objective, OBJECTIVES)
        _choice("baseline", self.baseline, BASELINES)
        _choice("opening_rollouts", self.opening_rollouts, OPENINGS)
        if self.opening_rollouts != "sampled" and not self.learn_opening:
            raise ValueError("opening_rollouts needs learn_opening (--learn-opening)")
        if self.learn_opening and (
            self.objective != "reinforce" or self.baseline != "pomo" or task.rotated_starts
        ):
            raise ValueError(
                "learn_opening trains the first choice that the pomo baseline forces on a task "
                f"whose first input keeps its place (cvrp); this run has objective "
                f"{quote(self.objective)}, baseline "
                f"{quote(self.baseline)} on {self.task}"
            )
        if self.objective == "dagger" and not task.completable:
            able = ", ".join(name for name, other in POINT_TASKS.items() if other.completable)
            raise ValueError(
                f"objective 'dagger' needs a task that can complete a partial output ({able}); "
                f"{task.name} cannot"
            )
        if self.objective == "dagger" and self.size_range.lo < 3:
            raise ValueError(
                f"objective 'dagger' needs n >= 3 (fewer inputs leave no choice), got {self.sizes}"
            )
        if self.objective == "reinforce" and not task.has_cost:
            costed = ", ".join(name for name, other in POINT_TASKS.items() if other.has_cost)
            raise ValueError(
                f"objective 'reinforce' needs a task with a cost ({costed}); {task.name} has none"
            )
        for name in ("data", "val_data", "init_from"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise ValueError(f"{name} must be a path string, got {quote(value)}")
        if self.labels == "file" and self.data is None:
            raise ValueError("labels 'file' needs a training data file")
        # Frozen: resolve the recipe defaults once so the saved config states the values used.
        if self.lr is None:
            object.__setattr__(self, "lr", DEFAULT_LR[self.optimizer])
        if self.decay is None:
            object.__setattr__(self, "decay", DEFAULT_DECAY[self.optimizer])
        self._check_numbers()
        if (self.steps is None) == (self.epochs is None):
            raise ValueError("set exactly one of steps and epochs")
        for name in ("bucket", "augment", "shared_label_steps", "learn_opening"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be true or false, got {quote(getattr(self, name))}")

    def generating_task(self) -> Task:
        """The task that draws this run's generated instances: the registered one, each
        instance stating ``capacity`` (drawn per instance for a range) when it is set."""
        task = get_task(self.task)
        if self.capacity is None:
            return task
        return task.with_capacities(CapacitySpec.parse(self.capacity))

    def _check_numbers(self) -> None:
        check_shared(self)
        positive_float("decay", self.decay)
        if self.decay > 1:
            raise ValueError(f"decay must be in (0, 1], got {quote(self.decay)}")
        if not is_number(self.ema) or not 0 <= self.ema < 1:
            raise ValueError(f"ema must be 0 (off) or in (0, 1), got {quote(self.ema)}")
        if not is_number(self.baseline_beta) or not 0 <= self.baseline_beta < 1:
            raise ValueError(f"baseline_beta must be in [0, 1), got {quote(self.baseline_beta)}")
        for name in (
            "decay_every",
            "epoch_size",
            "bucket_pool",
            "rl_samples",
            "baseline_every",
            "baseline_count",
        ):
            positive_int(name, getattr(self, name))
        if self.rl_samples < 2:
            raise ValueError(f"rl_samples must be at least 2, got {quote(self.rl_samples)}")
        for name in ("epochs", "threads"):
            if getattr(self, name) is not None:
                positive_int(name, getattr(self, name))
        if not is_int(self.warmup) or self.warmup < 0:
            raise ValueError(f"warmup must be a non-negative integer, got {quote(self.warmup)}")
        if not is_int(self.label_steps) or self.label_steps < 0:
            raise ValueError(
                f"label_steps must be a non-negative integer, got {quote(self.label_steps)}"
            )
        if self.shared_label_steps and not self.label_steps:
            raise ValueError("shared_label_steps needs label_steps (--label-steps K)")
        workers = self.workers
        if workers is not None and (not is_int(workers) or not 0 <= workers <= MAX_THREADS):
            raise ValueError(
                f"workers must be an integer in 0..{MAX_THREADS}, got {quote(workers)}"
            )

    @property
    def size_range(self) -> SizeRange:
        return SizeRange.parse(self.sizes)

    @property
    def labels_training_data(self) -> bool:
        """Whether training batches carry the expert's labels: only the likelihood objective
        reads them (``reinforce`` needs none; ``dagger`` makes its own from the model's
        prefixes)."""
        return self.objective == "likelihood"

    @property
    def validation_constraints(self) -> str:
        """The validation decoding's constraints: ``val_constraints``, else the paper's mask for
        the task (``Task.paper_constraints``; not the training loss's mask, which is
        ``train_constraints``)."""
        return self.val_constraints or get_task(self.task).paper_constraints

    def learning_rate(self, step: int) -> float:
        """The learning rate for optimiser step ``step`` (0-based), warm-up included."""
        rate = self.lr * self.decay ** (step / self.decay_every)
        if step < self.warmup:
            rate *= (step + 1) / self.warmup
        return rate


@dataclass(frozen=True)
class RunConfig:
    """Model plus training recipe; the JSON in every checkpoint is :meth:`to_dict`."""

    model: ModelConfig
    train: TrainConfig

    def __post_init__(self) -> None:
        task = get_task(self.train.task)
        capacity = self.model.features == "capacity"  # rows state a capacity: one more column
        if capacity and not getattr(task, "capacity_column", False):
            raise ValueError(
                f"features capacity need a task whose instances state a capacity (knapsack), "
                f"not {task.name}"
            )
        if self.train.capacity is not None and not capacity:
            raise ValueError(
                f"capacity {self.train.capacity}: the generated instances state a capacity, so "
                "the model must read it (features capacity, --features capacity)"
            )
        if self.model.input_dim != task.dim + capacity:
            raise ValueError(
                f"task {task.name} has {task.dim + capacity}-D inputs, "
                f"the model expects {self.model.input_dim}-D"
            )
        if self.model.decoder in PERMUTATION_DECODERS and not task.permutation_output:
            able = ", ".join(t.name for t in POINT_TASKS.values() if t.permutation_output)
            raise ValueError(
                f"--decoder {self.model.decoder} needs a task whose output is a permutation of "
                f"its inputs ({able}), not {task.name}"
            )
        if self.train.label_steps and (
            self.model.decoder != "heavy" or self.train.objective == "reinforce"
        ):
            raise ValueError(
                "label_steps (sub-sampled teacher forcing) needs --decoder heavy and the "
                "likelihood or dagger objective"
            )
        hi = self.train.size_range.hi
        if self.model.max_n is not None and self.model.max_n < hi:
            raise ValueError(
                f"a {self.model.kind} model with max_n {self.model.max_n} "
                f"cannot train on n up to {hi}"
            )

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RunConfig:
        """Build from ``{"model": {...}, "train": {...}}``; unknown keys raise ValueError."""
        if not isinstance(d, dict) or set(d) != {"model", "train"}:
            keys = sorted(map(str, d)) if isinstance(d, dict) else d
            raise ValueError(
                f"run config needs exactly the keys model and train, got {quote(keys)}"
            )
        return cls(ModelConfig.from_dict(d["model"]), train_from_dict(d["train"]))

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model.to_dict(), "train": asdict(self.train)}


def train_from_dict(d: dict[str, Any]) -> TrainConfig:
    """A TrainConfig from a dict; raises ValueError naming unknown keys."""
    known = {f.name for f in fields(TrainConfig)}
    unknown = sorted(map(str, set(d) - known))
    if unknown:  # the first one's nearest known key, not all of them: the error stays one line
        raise ValueError(
            f"unknown training config keys: {quote(unknown)}{did_you_mean(unknown[0], known)}"
        )
    return TrainConfig(**d)


def _choice(name: str, value: object, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"unknown {name} {quote(value)}; choose from {', '.join(choices)}")
