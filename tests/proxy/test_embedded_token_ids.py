"""The embedded model with engine token ids (`--token-ids`) behind the real proxy: what a trainer reads."""

import openai
import pytest

from forge_eval.models import EMBEDDED_MODELS, EmbeddedModelServer
from forge_eval.models._token_ids import load_tokenizer
from forge_eval.proxy import read_calls, read_rollout
from forge_eval.training import build_trajectory, rollout_fidelity

pytestmark = pytest.mark.e2e

MODEL = "smollm2"


@pytest.fixture(scope="module")
def model_server():
    if not EMBEDDED_MODELS.get(MODEL).installed():
        pytest.skip(f"{MODEL} weights are not installed (make setup)")
    with EmbeddedModelServer(model=MODEL, token_ids=True, startup_timeout=600) as server:
        yield server


def test_the_proxy_records_the_ids_the_engine_evaluated_and_sampled(model_server, make_proxy):
    proxy = make_proxy([model_server.base_url], served_model=MODEL)
    created = proxy.rollout("ids", harness="react", sampling={"temperature": 0.0, "max_tokens": 12})
    client = openai.OpenAI(base_url=proxy.url + created["base_path"] + "/v1", api_key="unused", max_retries=0)
    messages: list = [{"role": "user", "content": "Name a colour."}]
    first = client.chat.completions.create(model="policy", messages=messages)
    messages += [
        {"role": "assistant", "content": first.choices[0].message.content},
        {"role": "user", "content": "Another one."},
    ]
    client.chat.completions.create(model="policy", messages=messages)

    calls = read_calls(proxy.records, "ids")
    tokenizer = load_tokenizer(EMBEDDED_MODELS.get(MODEL).weights_path())
    for call in calls:
        served = call.served_request["messages"]
        rendered = tokenizer.apply_chat_template(
            served, add_generation_prompt=True, tokenize=True, return_dict=False
        )
        assert call.prompt_token_ids == list(rendered)
        assert call.usage["prompt_tokens"] == len(call.prompt_token_ids)  # llama.cpp evaluated exactly these
        assert (
            len(call.completion_token_ids) == len(call.completion_logprobs) == call.usage["completion_tokens"]
        )
        text = call.returned_response["choices"][0]["message"]["content"]
        assert tokenizer.decode(call.completion_token_ids, skip_special_tokens=True) == text
    fidelity = rollout_fidelity(build_trajectory(read_rollout(proxy.records, "ids"), calls))
    assert fidelity.without_ids == 0 and fidelity.checked == 1
    assert fidelity.exact + sum(fidelity.breaks.values()) == 1
