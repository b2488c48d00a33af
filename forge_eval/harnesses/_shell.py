"""A shell tool whose result says how the command exited.

Inspect's `bash()` returns stderr and stdout as plain text whatever the exit status, with no error flag, so a
reader of the transcript cannot tell a failed command from one that printed to stderr (behavioral analysis'
error recovery then sees no failure at all). This tool runs the command the same way and appends
`exit status: N` when N != 0, the form the behavior rules read (`HarnessRules.exit_code`). Kept under the
name `bash` with the argument `command`, so transcripts read exactly like Inspect's own tool.
"""

from inspect_ai._util.registry import registry_info, registry_params
from inspect_ai.tool import Tool, tool
from inspect_ai.util import sandbox as sandbox_env

_INSPECT_BASH = "inspect_ai/bash"


@tool(name="bash")
def bash_with_status(timeout: int | None = None, user: str | None = None, sandbox: str | None = None) -> Tool:
    """Bash in the sample's sandbox; the result ends with `exit status: N` when the command failed.

    Args:
      timeout: Timeout (in seconds) for the command.
      user: User to run the command as.
      sandbox: Sandbox environment name (default: the sample's default sandbox).
    """

    async def execute(command: str) -> str:
        """
        Use this function to execute bash commands.

        Args:
          command: The bash command to execute.

        Returns:
          The output of the command (stderr, then stdout), and its exit status when it is not 0.
        """
        result = await sandbox_env(sandbox).exec(
            cmd=["bash", "--login", "-c", command], timeout=timeout, user=user
        )
        output = f"{result.stderr}\n{result.stdout}" if result.stderr else result.stdout
        if result.returncode != 0:
            output = f"{output.rstrip()}\nexit status: {result.returncode}"
        return output

    return execute


def with_exit_status(tools: list[Tool]) -> list[Tool]:
    """`tools` with Inspect's `bash()` replaced by `bash_with_status()` with the same settings."""
    replaced = []
    for t in tools:
        if registry_info(t).name == _INSPECT_BASH:
            params = registry_params(t)
            t = bash_with_status(
                timeout=params.get("timeout"), user=params.get("user"), sandbox=params.get("sandbox")
            )
        replaced.append(t)
    return replaced
