"""The embedded llama.cpp model server as the proxy's upstream: just another OpenAI-compatible endpoint."""

import anthropic
import openai
import pytest

from forge_eval.models import EMBEDDED_MODELS, EmbeddedModelServer
from forge_eval.proxy import read_calls

pytestmark = pytest.mark.e2e

MODEL = "smollm2"


@pytest.fixture(scope="module")
def model_server():
    if not EMBEDDED_MODELS.get(MODEL).installed():
        pytest.skip(f"{MODEL} weights are not installed (make setup)")
    with EmbeddedModelServer(model=MODEL, deterministic=True) as server:
        yield server


def test_proxy_serves_and_records_the_embedded_model(model_server, make_proxy):
    proxy = make_proxy([model_server.base_url], served_model=MODEL)
    created = proxy.rollout("embedded", sampling={"temperature": 0.0, "seed": 1, "max_tokens": 8})
    oa = openai.OpenAI(base_url=proxy.url + created["base_path"] + "/v1", api_key="unused", max_retries=0)
    question = [{"role": "user", "content": "Say hello."}]
    plain = oa.chat.completions.create(model="any-alias", messages=question, max_tokens=64)
    streamed = "".join(
        c.choices[0].delta.content or ""
        for c in oa.chat.completions.create(model="any-alias", messages=question, stream=True)
        if c.choices
    )
    an = anthropic.Anthropic(base_url=proxy.url, api_key=created["api_key"], max_retries=0)
    message = an.messages.create(model="claude-x", max_tokens=8, messages=question)

    assert plain.choices[0].message.content  # the model said something
    assert streamed == plain.choices[0].message.content  # pinned temperature 0 + seed: the same text
    assert message.content[0].text == plain.choices[0].message.content
    calls = read_calls(proxy.records, "embedded")
    assert [c.api for c in calls] == ["chat", "chat", "anthropic_messages"]
    for call in calls:
        assert call.endpoint == model_server.base_url.removesuffix("/v1") and call.error_kind == "none"
        assert call.served_request["model"] == MODEL and call.served_request["max_tokens"] == 8
        assert call.usage["completion_tokens"] <= 8
        if call.completion_logprobs is not None:  # llama.cpp answers logprobs; vLLM would add token ids
            assert len(call.completion_logprobs) == call.usage["completion_tokens"]
