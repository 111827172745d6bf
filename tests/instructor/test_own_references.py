"""The analysis of instructor.own_references on test cells of its own: every way a
reference can read the student's object is refused, and the ways the course's tests build
their references from their own objects (or compare outputs with outputs) pass."""

from __future__ import annotations

import textwrap

import pytest

from instructor.own_references import Kind, cell_findings

FUNCTIONS = {"layer_norm"}
CLASSES = {"Block", "FeedForward"}


def findings(source: str) -> list[str]:
    return [f.expression for f in cell_findings(textwrap.dedent(source), FUNCTIONS, CLASSES)]


REFUSED = {
    "a sublayer of the block called": """
        block = Block(att, ff, 4)
        check_close(block(X), block.attention(X, None)[0] + X, "out")
    """,
    "a helper given the block (notebook 10's old hidden test)": """
        def reference(block, X):
            return block.norm2(X + block.feed_forward(X))

        block = Block(att, ff, 4).double()
        out = block(X)
        expected = reference(block, X)
        check_close(out, expected, "out")
    """,
    "weights read from the module": """
        ffn = FeedForward(4, 8).double().eval()
        W1, b1 = ffn.linear1.weight, ffn.linear1.bias
        check_close(ffn(X), torch.relu(X @ W1.T + b1), "out")
    """,
    "a layer taken by getattr": """
        ffn = FeedForward(4, 8)
        for name in ("linear1", "linear2"):
            layer = getattr(ffn, name)
        check_close(ffn(X), layer(X), "out")
    """,
    "the test's own layer loaded from the module's state": """
        ffn = FeedForward(4, 8)
        own = nn.Linear(4, 8)
        own.load_state_dict(ffn.linear1.state_dict())
        check_close(ffn(X), own(X), "out")
    """,
    "a tensor of the test's filled in place from the module": """
        ffn = FeedForward(4, 8)
        W = torch.empty(8, 4)
        W.copy_(ffn.linear1.weight)
        check_close(ffn(X), X @ W.T, "out")
    """,
    "an item assigned from the module": """
        ffn = FeedForward(4, 8)
        weights = {}
        weights["W"] = ffn.linear1.weight
        check_close(ffn(X), X @ weights["W"].T, "out")
    """,
    "a closure over the module": """
        block = Block(att, ff, 4)

        def reference(X):
            return X + block.attention(X)[0]

        check_close(block(X), reference(X), "out")
    """,
    "a lambda over the module": """
        block = Block(att, ff, 4)
        att_of_block = lambda Z: block.attention(Z, None)[0]
        check_close(block(X), X + att_of_block(X), "out")
    """,
    "a block built by a helper given the graded class": """
        layer, block, ff = build(Block, seed=3)
        check_close(block(X), block.norm1(X), "out")
    """,
    "an item of what the helper built": """
        made = build(Block, seed=3)
        check_close(made[1](X), made[1].norm1(X), "out")
    """,
    "a comprehension over the module's layers": """
        ffn = FeedForward(4, 8)
        Ws = [layer.weight for layer in (ffn.linear1, ffn.linear2)]
        check_close(ffn(X), X @ Ws[0].T @ Ws[1].T, "out")
    """,
    "a loop over the module's children": """
        block = Block(att, ff, 4)
        for child in block.children():
            norm = child
        check_close(block(X), norm(X), "out")
    """,
    "an unknown function given the module": """
        block = Block(att, ff, 4)
        twin = copy.deepcopy(block)
        check_close(block(X), twin.norm1(X), "out")
    """,
    "the hidden part reads what the visible part took": """
        ffn = FeedForward(4, 8)
        W = ffn.linear1.weight
        print("visible tests passed")
        ### BEGIN HIDDEN TESTS
        check_close(ffn(X), X @ W.T, "out")
        ### END HIDDEN TESTS
    """,
    "a keyword expected value": """
        block = Block(att, ff, 4)
        check_close(block(X), expected=block.feed_forward(X), name="out")
    """,
    "torch.testing.assert_close": """
        block = Block(att, ff, 4)
        torch.testing.assert_close(block(X), block.feed_forward(X))
    """,
    "a shape read from the module": """
        ffn = FeedForward(4, 8)
        check_shape(ffn(X), ffn.linear2.weight.shape, "out")
    """,
    "the module's attribute through an attribute of the graded class": """
        check_close(layer_norm(x, g, b), layer_norm.__wrapped__(x, g, b), "out")
    """,
    "a sublayer called through checked_call": """
        block = checked_call(Block, att, ff, 4)
        check_close(block(X), checked_call(block.attention, X, None)[0] + X, "out")
    """,
    "a nested helper given the block": """
        def inner(module, X):
            return module.feed_forward(X)

        def outer(module, X):
            return inner(module, X) + X

        block = Block(att, ff, 4)
        check_close(block(X), outer(block, X), "out")
    """,
}


@pytest.mark.parametrize("source", REFUSED.values(), ids=REFUSED.keys())
def test_a_reference_read_from_the_student_s_object_is_refused(source: str) -> None:
    assert findings(source), "not refused"


ALLOWED = {
    "notebook 10's hidden test now: the test's copies and weights": """
        import copy

        def reference(attention, feed_forward, norms, X):
            (w1, b1), (w2, b2) = norms
            H = F.layer_norm(X + attention(X)[0], X.shape[-1:], w1, b1)
            return F.layer_norm(H + feed_forward(H), H.shape[-1:], w2, b2)

        att = Attention(4).double()
        ff = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4)).double()
        att_ref, ff_ref = copy.deepcopy(att), copy.deepcopy(ff)
        block = Block(att, ff, 4).double()
        norms = [tuple(torch.randn(4) for _ in range(2)) for _ in range(2)]
        with torch.no_grad():
            for norm, (w, b) in zip((block.norm1, block.norm2), norms, strict=True):
                norm.weight.copy_(w)
                norm.bias.copy_(b)
        out = block(X)
        expected = reference(att_ref, ff_ref, norms, X)
        check_close(out, expected, "out")
    """,
    "weights written into the module from the test's own layers": """
        def own_layers(ffn, g):
            layers = nn.Linear(4, 8), nn.Linear(8, 4)
            with torch.no_grad():
                for own, name in zip(layers, ("linear1", "linear2"), strict=True):
                    own.weight.copy_(torch.randn(own.weight.shape, generator=g))
                    getattr(ffn, name).load_state_dict(own.state_dict())
            return nn.Sequential(layers[0], nn.ReLU(), layers[1])

        ffn = FeedForward(4, 8)
        reference = own_layers(ffn, g)
        check_close(ffn(X), reference(X), "out")
    """,
    "an output compared with the output at another input": """
        ffn = FeedForward(4, 8).eval()
        out = ffn(X)
        out2 = ffn(X2)
        check_close(out2[:, 1:], out[:, 1:], "the rows that did not change")
    """,
    "an output compared with its own transpose": """
        mask = layer_norm(x, g, b)
        check_close(mask, mask.T, "symmetric")
    """,
    "torch's layer the helper built next to the block": """
        layer, block, ff = build(Block, seed=3)
        check_close(block(X), layer(X), "out")
    """,
    "a structural check of the module's parts": """
        ffn = FeedForward(4, 8)
        check_type(ffn.linear1, nn.Linear, "linear1")
        check_shape(ffn.linear1.weight, (8, 4), "linear1.weight")
    """,
    "a message chosen from the module's parts": """
        ffn = FeedForward(4, 8)
        check_close(
            ffn(X), own(X), "out", known_mistakes={"no ReLU": ffn.linear2(ffn.linear1(X))}
        )
    """,
    "outputs of calls through checked_call compared with each other": """
        ffn = checked_call(FeedForward, 4, 8)
        out = checked_call(ffn, X)
        out2 = checks.checked_call(ffn, X2, hint="a batch")
        check_close(out2[:, 1:], out[:, 1:], "the rows that did not change")
    """,
    "the input's copy before the call": """
        copy_x = x.clone()
        out = layer_norm(x, g, b)
        check_unchanged(copy_x, x, "x")
        check_close(out, F.layer_norm(x, (4,), g, b), "out")
    """,
}


@pytest.mark.parametrize("source", ALLOWED.values(), ids=ALLOWED.keys())
def test_a_reference_from_the_test_s_own_objects_passes(source: str) -> None:
    assert not findings(source)


def test_a_finding_names_the_cell_the_line_the_check_and_the_part() -> None:
    source = textwrap.dedent(REFUSED["the hidden part reads what the visible part took"])
    (finding,) = cell_findings(source, FUNCTIONS, CLASSES, "test_FeedForward")
    assert (finding.grade_id, finding.check, finding.hidden) == (
        "test_FeedForward",
        "check_close",
        True,
    )
    assert finding.line == 6 and "test_FeedForward, line 6 (hidden)" in str(finding)


def test_the_kinds_are_ordered_from_own_to_the_student_s_parts() -> None:
    assert Kind.OWN < Kind.OUTPUT < Kind.OBJECT < Kind.FROM_ATTRIBUTE
