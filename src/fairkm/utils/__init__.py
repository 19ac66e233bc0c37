"""Reading and checking what the user gives: arrays, sensitive features, weights, parameters.

Everything above reads its inputs here, so one input means one thing across
the library. Nothing here loads numba, and nothing here is public API.
"""
