"""The synthetic sequence-classification tasks of GEC §4, A.4 and A.5.3.

A latent centre c is uniform in [-2, 2]^2; the sequence is x_i = c + eps_i, i = 1..8, with
eps_i ~ N(0, 0.20^2 I_2); the label depends on c only:

* ``curved`` (GEC §4): r = |c|, theta = atan2(c_2, c_1), s(c) = sin(2.5 theta) + 0.6 (r - 1.2),
  y = 1[s(c) > 0];
* ``linear`` (GEC A.4): y = 1[w^T c > 0] with the fixed w = LINEAR_NORMAL = (1, -1/2)
  (the paper does not print its w; any fixed w through the origin gives a balanced task).

All randomness comes from :class:`attngeom.kernels.sampling.Sampler`; the arrays are NumPy float64.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attngeom.core.errors import BadInput
from attngeom.kernels.sampling import Sampler

TASKS = ("curved", "linear")
#: GEC A.5.3: sequences of length 8, latent box [-2, 2]^2, noise std 0.20.
SEQUENCE_LENGTH = 8
BOX = 2.0
NOISE_STD = 0.20
#: The normal w of the linear control (GEC A.4 leaves it unstated).
LINEAR_NORMAL = np.array([1.0, -0.5])


@dataclass(frozen=True)
class Dataset:
    """One split of a task.

    Attributes
    ----------
    centres : latent centres c, shape=[N, 2]
    sequences : x_i = c + eps_i, shape=[N, 8, 2]
    labels : y in {0, 1}, shape=[N] (int64)
    """

    centres: np.ndarray
    sequences: np.ndarray
    labels: np.ndarray

    def __len__(self) -> int:
        return len(self.labels)


def curved_score(centres: np.ndarray) -> np.ndarray:
    """s(c) = sin(2.5 theta) + 0.6 (|c| - 1.2) (GEC §4), centres shape=[..., 2] -> shape=[...]."""
    radius = np.hypot(centres[..., 0], centres[..., 1])
    theta = np.arctan2(centres[..., 1], centres[..., 0])
    return np.sin(2.5 * theta) + 0.6 * (radius - 1.2)


def linear_score(centres: np.ndarray) -> np.ndarray:
    """w^T c (GEC A.4), centres shape=[..., 2] -> shape=[...]."""
    return centres @ LINEAR_NORMAL


def task_score(task: str, centres: np.ndarray) -> np.ndarray:
    """The score whose sign is the label of ``task``."""
    if task == "curved":
        return curved_score(centres)
    if task == "linear":
        return linear_score(centres)
    raise BadInput(f"unknown task {task!r}; choose one of {', '.join(TASKS)}")


def uniform_centres(sampler: Sampler, count: int) -> np.ndarray:
    """``count`` centres uniform in [-2, 2]^2 (53-bit grid of the seeded integer stream)."""
    grid = 2 ** 52
    unit = (sampler.integers((count, 2), 0, grid - 1) + 0.5) / grid
    return BOX * (2.0 * unit - 1.0)


def make_split(task: str, count: int, sampler: Sampler) -> Dataset:
    """One split: centres, noisy sequences and labels, all drawn from ``sampler``."""
    if count < 1:
        raise BadInput(f"a split needs at least one example; got {count}")
    centres = uniform_centres(sampler.spawn(0), count)
    noise = sampler.spawn(1).floats((count, SEQUENCE_LENGTH, 2), NOISE_STD)
    labels = (task_score(task, centres) > 0).astype(np.int64)
    return Dataset(centres, centres[:, None, :] + noise, labels)


def make_task(task: str, train_size: int, test_size: int, seed: int) -> tuple[Dataset, Dataset]:
    """The train and test splits of ``task`` for one seed (shared by every variant run
    with that seed, so variants are compared on the same data)."""
    if task not in TASKS:
        raise BadInput(f"unknown task {task!r}; choose one of {', '.join(TASKS)}")
    sampler = Sampler(seed).spawn(TASKS.index(task))
    return make_split(task, train_size, sampler.spawn(0)), make_split(task, test_size, sampler.spawn(1))
