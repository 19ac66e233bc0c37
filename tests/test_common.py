"""scikit-learn's estimator check suite."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from fairkm import FairKM


@parametrize_with_checks(
    [
        FairKM(n_init=2, max_iter=20),
        FairKM(n_clusters=3, init="random", n_init=2, max_iter=50),
        FairKM(n_clusters=3, algorithm="minibatch", batch_size=8, max_iter=50),
    ]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
