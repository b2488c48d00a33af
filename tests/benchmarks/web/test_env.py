"""The browser environment against a real Chromium: every action, tabs, settling, network policy, crashes."""

from __future__ import annotations

import asyncio
import contextlib
import io

import psutil
import pytest
from PIL import Image

from forge_eval.benchmarks.web import ActionError, BrowserConfig, BrowserCrashedError, WebEnv, parse_action
from forge_eval.benchmarks.web.judges import JudgeView, ocr_available
from tests.benchmarks.web.conftest import LoopRunner, kill_chromium_children


async def _log(env: WebEnv) -> str:
    return await env.page.inner_text("#log")


def test_every_action_on_the_test_page(test_site: str, site_config: BrowserConfig, run: LoopRunner) -> None:
    async def main() -> None:
        async with WebEnv(site_config, world="w1", elements=True) as env:
            obs = await env.start(test_site + "/", task="exercise every action")
            assert obs.title == "Action test page"
            assert Image.open(io.BytesIO(obs.screenshot)).size == (1280, 720)
            assert "Click me" in (obs.aria or "")
            button = next(e for e in obs.elements or [] if e["name"] == "Click me")
            assert (button["x"], button["y"]) == (80, 40)

            await env.step({"name": "mouse_click", "x": 80, "y": 40})
            await env.step({"name": "mouse_click", "x": 80, "y": 40, "click_type": "double"})
            await env.step({"name": "mouse_click", "x": 80, "y": 40, "button": "right"})
            await env.step({"name": "hover_at", "x": 260, "y": 40})
            await env.step({"name": "mouse_click", "x": 120, "y": 115})
            await env.step({"name": "keyboard_type", "text": "lasagna"})
            await env.step({"name": "keyboard_press", "key": "Enter"})
            await env.step(
                {"name": "mouse_drag_and_drop", "from_x": 430, "from_y": 50, "to_x": 900, "to_y": 400}
            )
            await env.step({"name": "scroll_at", "x": 800, "y": 70, "delta_y": 300})
            obs = await env.step({"name": "scroll", "delta_y": 500})
            assert obs.title == "scrolled 500"
            log = (await _log(env)).split()
            assert log[:6] == ["click", "click", "dblclick", "rightclick", "hover", "enter:lasagna"]
            assert log[6] == "drop:900,400"
            assert log[-1] == "inner:300"

            await env.step({"name": "scroll", "delta_y": -500})
            obs = await env.step({"name": "mouse_click", "x": 40, "y": 168})  # "Next page"
            assert obs.title == "Second" and obs.url.endswith("/second")
            assert "world=w1" in await env.page.inner_text("#w")  # the world header reaches the site
            obs = await env.step({"name": "browser_nav", "nav_type": "go_back"})
            assert obs.title.startswith("Action test page") or obs.title.startswith("scrolled")

            obs = await env.step({"name": "mouse_click", "x": 40, "y": 208})  # target=_blank
            if len(obs.tabs) == 1:  # the new tab can appear a moment after the click, as in a real browser
                obs = await env.step({"name": "noop"})
            assert len(obs.tabs) == 2 and obs.tabs[1]["active"] and obs.title == "Second"
            obs = await env.step({"name": "browser_nav", "nav_type": "tab_focus", "tab_index": 0})
            assert obs.tabs[0]["active"]
            obs = await env.step({"name": "browser_nav", "nav_type": "new_tab", "url": test_site + "/second"})
            assert len(obs.tabs) == 3 and obs.tabs[2]["active"]
            obs = await env.step({"name": "goto", "url": test_site + "/"})
            assert obs.title == "Action test page"
            await env.step({"name": "noop"})
            await env.step({"name": "send_msg_to_user", "msg": "[ANSWER] done"})
            assert env.done and env.trajectory.answer == "[ANSWER] done"
            with pytest.raises(ActionError):
                await env.step({"name": "noop"})

            traj = env.trajectory
            assert traj.task == "exercise every action" and len(traj.steps) >= 19
            assert len(traj.screenshots) == len(traj.steps) + 1
            assert all(s.startswith(b"\x89PNG") for s in traj.screenshots)
            assert all(s.error is None for s in traj.steps)

    run(main())


def test_bad_actions_are_recorded_not_fatal(
    test_site: str, site_config: BrowserConfig, run: LoopRunner
) -> None:
    async def main() -> None:
        async with WebEnv(site_config) as env:
            await env.start(test_site + "/")
            await env.step({"name": "fly", "x": 1})
            await env.step({"name": "mouse_click", "x": "left"})
            await env.step({"name": "browser_nav", "nav_type": "tab_focus", "tab_index": 5})
            await env.step({"name": "report_infeasible", "reason": "cannot"})
            errors = [s.error for s in env.trajectory.steps]
            assert "unknown browser action 'fly'" in errors[0] and "mouse_click" in errors[0]
            assert "'x' must be a float" in errors[1]
            assert "no tab 5" in errors[2]
            assert errors[3] is None and env.done and env.trajectory.infeasible == "cannot"
            assert env.trajectory.final_response == "[INFEASIBLE] cannot"

    run(main())
    with pytest.raises(ActionError, match="needs 'url'"):
        parse_action({"name": "goto"})


def test_settle_waits_for_slow_and_scripted_navigation(
    test_site: str, site_config: BrowserConfig, run: LoopRunner
) -> None:
    async def main() -> None:
        async with WebEnv(site_config) as env:
            await env.start(test_site + "/")
            obs = await env.step({"name": "mouse_click", "x": 40, "y": 248})  # 600 ms server response
            assert obs.title == "Slow done"
            obs = await env.step({"name": "goto", "url": test_site + "/bounce"})
            await asyncio.sleep(0.1)
            obs = await env.observe()  # the document was replaced by script; the observation retries
            assert obs.title == "Second"

    run(main())


def test_offline_blocks_the_web_and_host_map_serves_local_clones(test_site: str, run: LoopRunner) -> None:
    async def main() -> None:
        async with WebEnv() as env:
            await env.start()
            await env.step({"name": "goto", "url": "https://www.example.com/"})
            error = env.trajectory.steps[-1].error or ""
            assert "cannot load https://www.example.com/" in error and "the run is offline" in error
        config = BrowserConfig(host_map={"www.allrecipes.com": test_site})
        async with WebEnv(config) as env:
            obs = await env.start("https://www.allrecipes.com/hello")
            assert obs.url == "https://www.allrecipes.com/hello"
            assert "hello from the mapped site" in await env.page.inner_text("body")
        async with WebEnv(BrowserConfig(local_origins=(test_site,))) as env:
            obs = await env.start(test_site + "/second")  # the benchmark's own server loads as it is
            assert obs.title == "Second"

    run(main())


def test_crashed_browser_is_an_error(test_site: str, site_config: BrowserConfig, run: LoopRunner) -> None:
    async def main() -> None:
        env = WebEnv(site_config)
        await env.start(test_site + "/")
        assert env._session is not None and env._session.browser is not None
        cdp = await env._session.browser.new_browser_cdp_session()
        with contextlib.suppress(Exception):  # the connection dies with the browser
            await cdp.send("Browser.crash")
        with pytest.raises(BrowserCrashedError, match="browser crashed"):
            for _ in range(3):
                await env.step({"name": "mouse_click", "x": 80, "y": 40})
        await env.close()
        # The next episode gets a fresh browser.
        async with WebEnv(site_config) as fresh:
            obs = await fresh.start(test_site + "/second")
            assert obs.title == "Second"

    run(main())


def test_text_judge_view_reads_the_screenshot_with_ocr(
    test_site: str, site_config: BrowserConfig, run: LoopRunner
) -> None:
    if not ocr_available():
        pytest.skip("tesseract is not installed (scripts/setup.d/50-chromium.sh installs it)")

    async def main() -> None:
        async with WebEnv(site_config) as env:
            await env.start(test_site + "/second")
            (content,) = JudgeView(text=True).screenshot(env.trajectory.initial, "Screenshot 1:")
            assert "Accessibility tree:" in content.text and "OCR of the screenshot:" in content.text
            assert "Second page" in content.text.split("OCR of the screenshot:")[1]

    run(main())


def test_a_browser_killed_while_idle_is_relaunched(
    test_site: str, site_config: BrowserConfig, run: LoopRunner
) -> None:
    async def episode() -> str:
        async with WebEnv(site_config) as env:
            return (await env.start(test_site + "/second")).title

    assert run(episode()) == "Second"  # the browser now lingers, idle, on the shared loop
    killed = kill_chromium_children()
    assert killed
    psutil.wait_procs(killed, timeout=10)
    assert run(episode()) == "Second"
