"""The whole-search accountant inside the real Opacus and torch, on the CPU: registered by name, created by Opacus's
registry, calibrating σ through Opacus's own ``get_noise_multiplier`` and ``make_private_with_epsilon``, recording a
real training of a tiny model. Run by ``python3 run.py test-opacus`` (its own environment, ./.venv-opacus), not by
the default suite.

References: the ε of the σ Opacus finds, asked afresh of the accountant (never above the target, within Opacus's
tolerance below it); symsel's bound on the same DP-SGD base (``symsel.bound``) for the history the training
recorded; and Opacus's own PRV accountant for one candidate, which the whole search must exceed.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
opacus = pytest.importorskip("opacus")

from opacus import PrivacyEngine  # noqa: E402
from opacus.accountants import create_accountant  # noqa: E402
from opacus.accountants.accountant import IAccountant  # noqa: E402
from opacus.accountants.utils import get_noise_multiplier  # noqa: E402

import symsel  # noqa: E402
from symsel.apps.opacus import register  # noqa: E402

DELTA = 1e-5
TARGET = 4.0
LAW = "geometric(mean=4)"


def tiny_problem(samples: int = 64, batch: int = 16):
    generator = torch.Generator().manual_seed(0)
    features = torch.randn(samples, 5, generator=generator)
    labels = (features[:, 0] > 0).long()
    dataset = torch.utils.data.TensorDataset(features, labels)
    loader = torch.utils.data.DataLoader(dataset, batch_size=batch)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    return model, optimizer, loader


def test_registered_by_name_and_created_by_opacus() -> None:
    name = register(LAW, final_run=True)
    accountant = create_accountant(mechanism=name)
    assert isinstance(accountant, IAccountant) and accountant.mechanism() == name
    accountant.history = [(2.0, 0.25, 8)]
    state = accountant.state_dict()
    fresh = create_accountant(mechanism=name)
    fresh.load_state_dict(state)
    assert fresh.history == accountant.history and len(fresh) == 8
    assert fresh.get_epsilon(DELTA) == accountant.get_epsilon(DELTA)


def test_get_noise_multiplier_calibrates_the_whole_search() -> None:
    name = register(LAW, final_run=True)
    sigma = get_noise_multiplier(target_epsilon=TARGET, target_delta=DELTA, sample_rate=0.25, steps=8,
                                 accountant=name)
    fresh = create_accountant(mechanism=name)
    fresh.history = [(sigma, 0.25, 8)]
    assert TARGET - 0.01 <= fresh.get_epsilon(DELTA) <= TARGET
    one_candidate = create_accountant(mechanism="prv")
    one_candidate.history = [(sigma, 0.25, 8)]
    assert one_candidate.get_epsilon(DELTA) < fresh.get_epsilon(DELTA)  # the search costs more than one training


def test_an_accountant_told_the_target_calibrates_to_the_sigma_of_the_bound() -> None:
    """Opacus's ``get_noise_multiplier`` through the accountant registered with ``target_epsilon`` returns a σ whose
    ε, asked afresh without the target, is within the budget and at most the tolerance and the calibration bound's
    allowance (``CALIBRATION_PAIR_WIDTH · E[K]``, docs/opacus.md) below it, near the σ found without the target."""
    from symsel.apps.opacus import CALIBRATION_PAIR_WIDTH

    plain = register(LAW, final_run=True)
    told = register(LAW, final_run=True, target_epsilon=TARGET)
    assert told != plain
    sigmas = [get_noise_multiplier(target_epsilon=TARGET, target_delta=DELTA, sample_rate=0.25, steps=8,
                                   accountant=name) for name in (plain, told)]
    fresh = create_accountant(mechanism=plain)
    fresh.history = [(sigmas[1], 0.25, 8)]
    assert TARGET - 0.01 - CALIBRATION_PAIR_WIDTH * 4 <= fresh.get_epsilon(DELTA) <= TARGET
    assert sigmas[1] == pytest.approx(sigmas[0], rel=1e-2)


def test_make_private_with_epsilon_trains_and_accounts_the_whole_search() -> None:
    name = register(LAW)
    model, optimizer, loader = tiny_problem()
    engine = PrivacyEngine(accountant=name)
    model, optimizer, loader = engine.make_private_with_epsilon(
        module=model, optimizer=optimizer, data_loader=loader, target_epsilon=TARGET, target_delta=DELTA, epochs=2,
        max_grad_norm=1.0)
    loss_fn = torch.nn.CrossEntropyLoss()
    for _ in range(2):
        for features, labels in loader:
            optimizer.zero_grad()
            loss_fn(model(features), labels).backward()
            optimizer.step()
    history = engine.accountant.history
    assert len(history) == 1
    sigma, rate, steps = history[0]
    assert sigma == optimizer.noise_multiplier and rate == pytest.approx(0.25) and steps == len(engine.accountant)
    base = symsel.parse_profile(f"dpsgd(q={rate!r}, sigma={sigma!r}, steps={steps})")
    expected = symsel.bound(symsel.parse_distribution(LAW), base).epsilon(DELTA)
    assert engine.get_epsilon(DELTA) == pytest.approx(expected, rel=1e-9)
    assert engine.get_epsilon(DELTA) <= TARGET * (1 + 1e-9) or steps != 8
