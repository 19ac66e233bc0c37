"""numpydoc validation of every public name: what each package exports, and its public methods.

Every check of :mod:`numpydoc.validate` runs except those in ``IGNORED``:
the three that numpydoc's documentation itself suggests leaving out (ES01,
SA01, EX01), and one that the project's style contradicts on purpose (RT02).
"""

import importlib
import inspect

import pytest

validate = pytest.importorskip("numpydoc.validate").validate
NumpyDocString = pytest.importorskip("numpydoc.docscrape").NumpyDocString

IGNORED = {
    "ES01": "an extended summary: a one-line summary is enough for a short function",
    "SA01": "a See Also section: cross-references are written where they help a reader",
    "EX01": "an Examples section: the README and the gallery hold the worked examples",
    "RT02": "a single return value with a name (``self : object``, ``labels : ndarray``) is "
            "numpydoc's format too, and scikit-learn's convention",
}

PACKAGES = [
    "fairkm", "fairkm.metrics", "fairkm.report", "fairkm.bounds", "fairkm.datasets",
    "fairkm.cluster", "fairkm.tradeoff", "fairkm.experiments", "fairkm.dask",
]


def _ours(obj):
    return getattr(obj, "__module__", "").split(".")[0] == "fairkm"


def public_names(package):
    """The qualified names of ``package``'s exported callables and their public methods.

    A class's methods and properties count when fairkm defines them (not the
    ones inherited from scikit-learn, whose docstrings are scikit-learn's).
    """
    module = importlib.import_module(package)
    names = []
    for name in module.__all__:
        obj = getattr(module, name)
        if not callable(obj):
            continue  # constants are documented in their module's docstring
        names.append(f"{package}.{name}")
        if not inspect.isclass(obj):
            continue
        for attribute in dir(obj):
            if attribute.startswith("_") and attribute != "__call__":
                continue
            raw = inspect.getattr_static(obj, attribute)
            func = raw.fget if isinstance(raw, property) else getattr(raw, "__func__", raw)
            if (inspect.isfunction(func) or isinstance(raw, property)) and _ours(func):
                names.append(f"{package}.{name}.{attribute}")
    return names


def _documented_attributes(qualified_name):
    package, _, name = qualified_name.rpartition(".")
    obj = getattr(importlib.import_module(package), name)
    if not inspect.isclass(obj):
        return set()
    documented = {p.name for p in NumpyDocString(inspect.getdoc(obj))["Attributes"]}
    # A field line may name several attributes ("eps, delta : float").
    documented = {part.strip() for entry in documented for part in entry.split(",")}
    if issubclass(obj, Exception):
        documented.add("message")  # an exception's text
    return documented


def errors(qualified_name):
    """The numpydoc errors of one name that the project's checks keep.

    A class users receive rather than build (a result dataclass, an
    exception) documents its constructor's arguments as Attributes, so PR01
    (undocumented parameters) counts those as documented.
    """
    found = []
    for code, message in validate(qualified_name)["errors"]:
        if code in IGNORED:
            continue
        if code == "PR01":
            if _missing(message) <= _documented_attributes(qualified_name):
                continue
        found.append(f"{qualified_name}: {code} {message}")
    return found


def _missing(message):
    # numpydoc writes "Parameters {'a', 'b'} not documented".
    inside = message[message.index("{") + 1:message.rindex("}")]
    return {part.strip().strip("'\"") for part in inside.split(",")}


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_name_passes_numpydoc(package):
    if package == "fairkm.dask":
        pytest.importorskip("distributed", reason="fairkm.dask needs fairkm[dask]")
    names = public_names(package)
    assert names, package
    problems = [problem for name in names for problem in errors(name)]
    assert problems == [], "\n".join(problems)


def test_methods_are_found():
    # The walk reaches the methods fairkm defines, not scikit-learn's.
    names = public_names("fairkm")
    assert "fairkm.FairKM.fit" in names and "fairkm.FairKM.transform" in names
    assert "fairkm.FairKM.get_params" not in names
    assert "fairkm.report.Audit.to_html" in public_names("fairkm.report")
