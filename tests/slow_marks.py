"""Which tests are ``slow``: those that start subprocesses, torchrun, a browser, a notebook or a
training. ``python -m pytest -m "not slow"`` leaves them out (the inner loop: a few minutes on
2 cores); the README's test command runs everything. ``tests/conftest.py`` applies the marks at
collection, so a module states nothing itself; ``tests/test_slow_marks.py`` checks that every
name here still exists."""

#: Modules whose tests all start processes or train (the reason for each, after it).
SLOW_MODULES = {
    "test_checkpoint": "trains and resumes runs",
    "test_copy_run": "trains a copy model",
    "test_dagger": "trains",
    "test_demo": "runs the demo on every bundled model",
    "test_distributed": "starts process groups",
    "test_cvrp_browser": "drives Chromium",
    "test_exercises": "runs each exercise in a child process",
    "test_gpu_recipe": "trains the GPU recipe at toy size",
    "test_input_memory": "children under an address-space limit",
    "test_knapsack_capacity_browser": "drives Chromium",
    "test_learning": "trains until a model learns",
    "test_lesson_traps": "trains a model per trap",
    "test_notebook": "runs the notebook in a kernel",
    "test_packaging": "builds and installs a wheel",
    "test_progress": "trains through a pipe in a child",
    "test_read_only_install": "children in read-only mounts",
    "test_reproduce": "trains the tables' runs (dry)",
    "test_rl_baselines": "trains with each baseline",
    "test_run_lock": "kills and resumes child trainings",
    "test_signals": "signals to child trainings",
    "test_span_classifier": "trains two span models",
    "test_span_train": "trains a span model",
    "test_torchrun": "starts torchrun",
    "test_web_browser": "drives Chromium",
    "test_web_geographic_page": "runs the page's geo.js in Node",
    "test_web_lesson_browser": "drives Chromium",
    "test_web_read_browser": "drives Chromium",
}

#: Single tests in other modules that start the command in a child process (pipes, standard
#: streams, a fresh interpreter) or train, as ``module::function``.
SLOW_TESTS = {
    "test_cli_data::test_closed_stdout_ends_quietly",
    "test_cli_data::test_help_exits_zero_and_stays_light",
    "test_cli_input_edge_cases::test_dash_writes_standard_output_for_every_command",
    "test_cli_input_edge_cases::test_eval_and_solve_take_tsplib_through_a_pipe",
    "test_cli_input_edge_cases::test_an_explicit_format_wins_over_a_tsplib_first_line",
    "test_cli_input_edge_cases::test_solve_from_stdin_matches_the_file",
    "test_cli_input_edge_cases::test_tsplib_through_a_pipe_reads_as_the_file_does",
    "test_copy_cli_errors::test_predict_reads_standard_input_as_a_file",
    "test_knapsack_capacity_training::test_the_api_and_the_command_train_the_same_capacity_run",
    "test_knapsack_capacity_training::test_the_api_states_a_drawn_capacity_on_array_data",
    "test_recorded_paths::test_the_command_records_init_from_from_the_run_parent",
    "test_recorded_paths::test_the_api_records_init_from_as_the_command_does",
    "test_training_race::test_checkpoint_now_resumes_from_that_very_step",
    "test_untrusted_files::test_data_from_dev_zero_is_one_line_and_pipes_still_read",
    "test_untrusted_files::test_model_fifo_is_one_line_and_does_not_block",
}


def is_slow(module: str, function: str) -> bool:
    """Whether the test ``function`` (its name without parameters) of ``module`` is slow."""
    return module in SLOW_MODULES or f"{module}::{function}" in SLOW_TESTS
