"""Each conversation goes back to the llama.cpp slot holding its history (forge_eval.models._slots)."""

from forge_eval.models._slots import SlotRouter

SYSTEM = {"role": "system", "content": "You are an agent."}
TASK = {"role": "user", "content": "Send the retry email."}


def _turn(conversation: list[dict], reply: str) -> list[dict]:
    return [*conversation, {"role": "assistant", "content": reply}, {"role": "user", "content": "Go on."}]


def test_a_conversation_returns_to_its_slot_and_a_twin_first_call_does_not_take_it():
    router = SlotRouter(4)
    seed0 = [SYSTEM, TASK]
    first = router.acquire(seed0)
    router.release(first)
    # the other seed asks the very same first prompt: a new conversation, another slot
    twin = router.acquire(list(seed0))
    assert twin != first
    router.release(twin)
    for reply in ("calling send_email", "done?", "retrying"):
        seed0 = _turn(seed0, reply)
        assert router.acquire(seed0) == first
        router.release(first)


def test_a_changed_history_is_a_new_conversation_in_the_least_recently_used_slot():
    router = SlotRouter(3)
    slots = []
    for text in ("a", "b", "c"):
        slot = router.acquire([SYSTEM, {"role": "user", "content": text}])
        router.release(slot)
        slots.append(slot)
    assert sorted(slots) == [0, 1, 2]
    edited = _turn([SYSTEM, {"role": "user", "content": "b, edited"}], "x")
    assert router.acquire(edited) == slots[0]  # "a" was served longest ago


def test_busy_slots_are_skipped_and_none_is_left_to_llama_cpp():
    router = SlotRouter(2)
    one = router.acquire([SYSTEM, {"role": "user", "content": "one"}])
    router.release(one)
    # its continuation arrives while both slots are busy: llama.cpp chooses
    a = router.acquire([SYSTEM, {"role": "user", "content": "two"}])
    b = router.acquire([SYSTEM, {"role": "user", "content": "three"}])
    assert {a, b} == {0, 1}
    assert router.acquire(_turn([SYSTEM, {"role": "user", "content": "one"}], "r")) is None
    router.release(a)
    assert router.acquire([SYSTEM, {"role": "user", "content": "four"}]) == a
