"""The suite's filter of Dask's unobserved ``AllExit`` records (see ``tests/conftest.py``).

Without it, a task that ended in ``AllExit`` and is freed by the garbage
collector in the middle of an ``ast.parse`` breaks that parse on Python 3.11.
"""

import ast
import asyncio
import gc
import inspect
import logging

import pytest

pytest.importorskip("distributed")

from distributed.client import AllExit  # noqa: E402

import fairkm.cluster._kernels as a_long_module  # noqa: E402


def leave_failed_tasks(error, n=3):
    """Run ``n`` tasks that raise ``error`` and drop them unobserved, in cycles only gc frees."""
    loop = asyncio.new_event_loop()

    async def fail():
        raise error

    tasks = [loop.create_task(fail()) for _ in range(n)]
    loop.run_until_complete(asyncio.sleep(0))
    loop.close()
    for task in tasks:
        task.cycle = task


def test_parsing_survives_dask_tasks_freed_during_it():
    source = inspect.getsource(a_long_module)
    thresholds = gc.get_threshold()
    gc.set_threshold(50, 1, 1)  # collections inside every parse
    try:
        for _ in range(100):
            leave_failed_tasks(AllExit())
            ast.parse(source)
    finally:
        gc.set_threshold(*thresholds)
        gc.collect()


def test_other_unobserved_task_errors_are_still_logged(caplog):
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        leave_failed_tasks(ValueError("a real error"), n=1)
        leave_failed_tasks(AllExit(), n=1)
        gc.collect()
    logged = [record.exc_info[1] for record in caplog.records if record.exc_info]
    assert [type(error) for error in logged] == [ValueError]
