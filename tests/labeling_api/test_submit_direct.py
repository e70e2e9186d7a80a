"""The submit hot path parses a body directly (labeling_api.serializers_submit.parsed_directly) and
runs the serializer only when that declines: both must accept the same bodies with the same result,
so an answer never depends on which of the two parsed it."""

from hypothesis import event, given, settings
from hypothesis import strategies as st

from annotate.services.submission import SubmissionContext
from labeling_api.serializers_submit import SubmitInSerializer, parsed_directly

N_STEPS = 3
ODD = [None, "", " ", "x", "1", 1, 0, -1, 2, 1.0, True, False, [], {}, {"text": "t"}, {"text": ""}, "a" * 200]

completion = st.fixed_dictionaries(
    {"text": st.just("alt text"), "rating": st.sampled_from([-1, 0, 1, None])},
    optional={"flagged": st.booleans()},
)
step_fields = {
    "flagged": st.booleans(),
    "alternatives": st.lists(completion, max_size=1),
    "human_completion": st.sampled_from(["a written step", {"text": "a written step"}, None]),
    "critique": st.sampled_from(["why", "  ", None]),
}


@st.composite
def bodies(draw):
    """Mostly well-formed bodies (every rule of the labeling modes in play), with up to two fields
    replaced by an odd value or dropped."""
    steps = []
    for i in range(draw(st.sampled_from([N_STEPS] * 4 + [0, 1, 2, N_STEPS + 1]))):
        step = {"index": i, "rating": draw(st.sampled_from([1, 1, 1, 0, -1, None]))}
        for name, values in step_fields.items():
            if draw(st.integers(0, 4)) == 0:  # each optional field in one step of five
                step[name] = draw(values)
        steps.append(step)
    body = {
        "idempotency_key": draw(st.sampled_from(["key-1", " k "])),
        "finish_reason": draw(st.sampled_from(["solution", "solution", "found_error", "give_up", "bad_problem"])),
        "total_time_ms": draw(st.sampled_from([0, 1200])),
        "steps": steps,
    }
    if draw(st.booleans()):
        body["reason"] = draw(st.sampled_from(["stuck", "  "]))
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 2]))):
        target = body
        if steps and draw(st.booleans()):
            target = draw(st.sampled_from(steps))
        key = draw(st.sampled_from(sorted(target)))
        if draw(st.booleans()):
            target[key] = draw(st.sampled_from(ODD))
        else:
            del target[key]
    return draw(st.sampled_from([body] * 30 + ODD))


contexts = st.builds(
    SubmissionContext,
    mode=st.sampled_from(["phase1", "phase2"]),
    critique_required=st.sampled_from([False, False, True]),
    step_texts=st.just([f"step {i}" for i in range(N_STEPS)]),
    rated=st.sampled_from([[True] * N_STEPS] * 3 + [[True, False, True], [False, True, True]]),
)


@settings(max_examples=1500, deadline=None)
@given(body=bodies(), context=contexts)
def test_the_direct_parse_and_the_serializer_agree(body, context):
    serializer = SubmitInSerializer(data=body, context={"solution": context})
    expected = serializer.validated_data if serializer.is_valid() else None
    event("accepted" if expected is not None else "refused")
    assert parsed_directly(body, context) == expected


def test_an_ordinary_submit_is_parsed_directly():
    context = SubmissionContext(mode="phase2", critique_required=False, step_texts=["a", "b"], rated=[True, True])
    body = {
        "idempotency_key": "k",
        "finish_reason": "solution",
        "total_time_ms": 5,
        "steps": [{"index": 0, "rating": 1}, {"index": 1, "rating": 0, "flagged": True, "alternatives": []}],
    }
    sub = parsed_directly(body, context)
    assert sub is not None and [(s.index, s.rating, s.flagged) for s in sub.steps] == [(0, 1, False), (1, 0, True)]
    assert sub.sent is body
