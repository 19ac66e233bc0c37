"""Plain NumPy transcription of ZGYA's outer loop, written from the algorithm.

The authors' released code (imtiazziko/Variational-Fair-Clustering,
``fair_clustering`` and ``bound_update``) as the library documents it: one
row per point, no deduplication, no transposed layout, no split factors, no
compiled code. The library never imports this; the tests compare
``fairkm.ZGYA`` with it.
"""

import numpy as np

KL_FLOOR = 1e-20
GRADIENT_FLOOR = 1e-15


def squared_distances(X, centers):
    """(n, k) squared distances, straight from the definition."""
    return ((X[:, None, :] - centers[None, :, :]) ** 2).sum(axis=2)


def masses(S, codes, n_values):
    """V_j^T S_k as an (m, k) table and 1^T S_k."""
    group_mass = np.array([S[codes == j].sum(axis=0) for j in range(n_values)])
    return group_mass.reshape(n_values, S.shape[1]), S.sum(axis=0)


def kl_cost(S, codes, targets):
    """sum over clusters of mass > 1e-20 of KL(U || P_k), group masses floored at 1e-20."""
    group_mass, mass = masses(S, codes, len(targets))
    total = 0.0
    for c in range(S.shape[1]):
        if mass[c] <= KL_FLOOR:
            continue
        for j, u in enumerate(targets):
            if u > 0:
                total += u * np.log(u / (max(group_mass[j, c], KL_FLOOR) / mass[c]))
    return total


def gradient(S, codes, targets):
    """b[p, k] = sum_j u_j (1 / 1^T S_k - v_jp / V_j^T S_k); 0 for empty clusters."""
    group_mass, mass = masses(S, codes, len(targets))
    live = mass > KL_FLOOR
    b = np.zeros_like(S)
    for p in range(S.shape[0]):
        j = codes[p]
        b[p, live] = (targets.sum() / mass[live]
                      - targets[j] / np.maximum(group_mass[j, live], GRADIENT_FLOOR))
    return b


def bound_update(S, dist, codes, targets, fairness_weight, lipschitz):
    """One update: S * exp(-(a + lambda b) / L), rows normalised; and the bound's value.

    Computed from logarithms, each row's largest term factored out, so that no row
    underflows to 0 / 0; entries below 1e-290 become 0, as the library documents.
    """
    b = gradient(S, codes, targets)
    with np.errstate(divide="ignore"):
        terms = np.log(S) - (dist + fairness_weight * b) / lipschitz
    top = terms.max(axis=1, keepdims=True)
    new = np.exp(terms - top)
    z = new.sum(axis=1)
    new /= z[:, None]
    new[new < 1e-290] = 0.0
    return new, -lipschitz * np.sum(np.log(z) + top[:, 0])


def optimise_bound(dist, codes, targets, fairness_weight, lipschitz, bound_tol, bound_max_iter,
                   bounds=None):
    """S restarted from softmax(-a), updated until the bound settles (from the third update).

    Appends the bound after each update to ``bounds`` when it is a list.
    """
    S = np.exp(-(dist - dist.min(axis=1, keepdims=True)))
    S /= S.sum(axis=1, keepdims=True)
    previous = None
    for step in range(1, bound_max_iter + 1):
        S, bound = bound_update(S, dist, codes, targets, fairness_weight, lipschitz)
        if bounds is not None:
            bounds.append(bound)
        if step >= 3 and abs(bound - previous) <= bound_tol * abs(previous):
            return S, step
        previous = bound
    return S, bound_max_iter


def objective(S, dist, codes, targets, fairness_weight):
    """E(S) = sum S a + lambda sum_k KL(U || P_k) (the K-Means term alone without targets)."""
    value = float(np.sum(S * dist))
    if targets is not None:
        value += fairness_weight * kl_cost(S, codes, targets)
    return value


def zgya(X, codes, targets, n_clusters, centers, reseed, *, fairness_weight=15.0,
         lipschitz=2.0, tol=1e-4, max_iter=100, bound_tol=1e-5, bound_max_iter=10000,
         max_reseeds=3):
    """The outer loop. ``targets`` None means Lloyd's K-Means; ``reseed(i)`` -> (centres, labels).

    Returns a dict with labels, S, centers, objective, history, bound_iters,
    n_reseeds and trivial.
    """
    k = n_clusters
    n = X.shape[0]
    fair = targets is not None and fairness_weight > 0
    dist = squared_distances(X, centers)
    labels = dist.argmin(axis=1)
    S = value = None
    history, bound_iters = [], []
    n_reseeds, trivial = 0, False

    def covers(labels):
        return len(set(labels.tolist())) == k

    def hard(labels):
        S = np.zeros((n, k))
        S[np.arange(n), labels] = 1.0
        return S

    for it in range(max_iter):
        previous = (centers, labels, S, value)
        if it > 0:
            # Each centre: the mean of the points with its label.
            centers = np.array([
                X[labels == c].mean(axis=0) if np.any(labels == c) else centers[c]
                for c in range(k)
            ])
            dist = squared_distances(X, centers)
        if fair and not covers(dist.argmin(axis=1)):
            if n_reseeds == max_reseeds:
                centers, labels, S, value = previous
                trivial = True
                break
            centers, labels = reseed(n_reseeds)
            n_reseeds += 1
            dist = squared_distances(X, centers)
        if fair:
            S, n_updates = optimise_bound(
                dist, codes, targets, fairness_weight, lipschitz, bound_tol, bound_max_iter)
            labels = S.argmax(axis=1)
        else:
            labels = dist.argmin(axis=1)
            S, n_updates = hard(labels), 0
        value = objective(S, dist, codes, targets if fair else None, fairness_weight)
        if not covers(labels):
            if n_reseeds == max_reseeds:
                centers, labels, S, value = previous
                trivial = True
                break
            centers, labels = reseed(n_reseeds)
            n_reseeds += 1
            dist = squared_distances(X, centers)
            if fair:
                S = np.exp(-(dist - dist.min(axis=1, keepdims=True)))
                S /= S.sum(axis=1, keepdims=True)
            else:
                S = hard(labels)
            value = objective(S, dist, codes, targets if fair else None, fairness_weight)
            history.append(value)
            bound_iters.append(n_updates)
            continue
        history.append(value)
        bound_iters.append(n_updates)
        # Relative to the authors' energy, whose fairness term is the cross-entropy
        # sum_k H(U, P_k) = sum_k (H(U) + KL(U || P_k)).
        entropy = -sum(u * np.log(u) for u in targets if u > 0) if fair else 0.0
        if it >= 2 and abs(value - history[-2]) <= tol * abs(
                history[-2] + fairness_weight * k * entropy):
            break
    return {"labels": labels, "S": S, "centers": centers, "objective": value,
            "history": np.array(history), "bound_iters": np.array(bound_iters),
            "n_reseeds": n_reseeds, "trivial": trivial}
