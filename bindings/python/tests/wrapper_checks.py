"""A check that DataParallel and DistributedDataParallel share (test_parallel.py,
distributed/test_ddp.py): the methods they pass through to the module they wrap."""
import numpy as np


def assert_passes_through_to(wrapper, model, x):
    """wrapper's module methods act on the module it wraps, `model`; x is a batch for one
    forward of the wrapper."""
    assert wrapper.eval() is wrapper and not model.training
    assert wrapper.train() is wrapper and model.training
    names = [name for name, _ in model.named_parameters()]
    assert names and [name for name, _ in wrapper.named_parameters()] == names
    for mine, theirs in zip(wrapper.parameters(), model.parameters(), strict=True):
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
    wrapper(x).sum().backward()
    assert all(p.grad is not None for p in model.parameters())
    wrapper.zero_grad()
    assert all(p.grad is None for p in model.parameters())
    state = wrapper.state_dict()
    assert sorted(state) == sorted(model.state_dict())
    first = model.parameters()[0]
    saved = first.numpy().copy()
    first.numpy(copy=False)[...] = 7.0
    assert (first.numpy() == 7.0).all()
    wrapper.load_state_dict(state)
    np.testing.assert_array_equal(model.parameters()[0].numpy(), saved)
