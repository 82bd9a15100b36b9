"""Ray, for whatever runs on it: connecting to a cluster or starting a local Ray on the loopback only, and
RayUnavailable, said as what Ray said, before any work starts.
"""

from __future__ import annotations


class RayUnavailable(RuntimeError):
    """Ray is not installed, the cluster cannot be reached, or it refused this client: refused before any record."""


def _ray_problem(e: BaseException, where: str, log: str = "") -> str:
    """What Ray said, as what it is: authentication refused, a version mismatch, or the connection itself (Ray's
    own words kept, on one line; ``log``: what Ray's native code wrote meanwhile, where the real cause often is)."""
    import ray.exceptions

    said = " ".join(str(e).split())[:800] or type(e).__name__
    low, native = said.lower(), log.lower()
    if isinstance(e, getattr(ray.exceptions, "AuthenticationError", ())) or "authentication" in low \
            or "invalidauthtoken" in native or "unauthenticated" in native:
        why = said if "authentication" in low else "Ray's token authentication is on there and this client has no valid token"
        return (f"the Ray cluster at {where} refused this client: {why} (give it the cluster's token: RAY_AUTH_MODE=token "
                "with RAY_AUTH_TOKEN or the token file)")
    if "version mismatch" in low:
        return f"the Ray cluster at {where} runs another Ray or Python version than this client: {said}"
    return f"cannot reach the Ray cluster at {where}: {said}"


def connect(address: str | None) -> None:
    """``ray.init`` on ``address`` (None: a new local Ray bound to 127.0.0.1, no dashboard, never another cluster
    found on the machine), or a clear RayUnavailable, its cause searched in the native log lines kept back."""
    import os
    import tempfile

    try:
        import ray
    except ImportError:
        raise RayUnavailable("engine ray needs the ray extra: pip install 'judge[ray]' (or pip install -e '.[ray]')") from None
    if ray.is_initialized():
        return
    if address and address != "auto":
        from judge.llm.preflight import server_problem

        url = address if "://" in address else f"tcp://{address}"
        problem = server_problem(url, timeout=3.0)
        if problem:  # ray.init would retry for minutes
            raise RayUnavailable(f"cannot reach the Ray cluster at {address}: {problem}")
    options: dict = {}
    if address is None:  # a local Ray: its own, on the loopback only, and its workers import this very judge package
        from pathlib import Path

        here = str(Path(__file__).resolve().parents[1])
        options["runtime_env"] = {"env_vars": {"PYTHONPATH": os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH")) if p)}}
        options["_node_ip_address"] = "127.0.0.1"
        _loopback_only()
    failure = None
    with tempfile.TemporaryFile() as native:
        saved = os.dup(2)
        os.dup2(native.fileno(), 2)
        try:
            ray.init(address=address or "local", include_dashboard=False, log_to_driver=False, ignore_reinit_error=True,
                     logging_level="ERROR", **options)
        except Exception as e:  # ConnectionError, TimeoutError, ValueError from a bad address, AuthenticationError, RuntimeError
            failure = e
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        if failure is not None:
            native.seek(0)
            log = native.read()[-65536:].decode("utf-8", "replace")
            raise RayUnavailable(_ray_problem(failure, address or "a local Ray instance", log)) from None


def _loopback_only() -> None:
    """Keep a local Ray's servers on 127.0.0.1 (in this process and its children): Ray turns the loopback into
    the machine's address unless told this is no cluster, the switch it keeps for Windows and macOS."""
    import os

    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    try:
        from ray._private import ray_constants

        ray_constants.ENABLE_RAY_CLUSTER = False
    except (ImportError, AttributeError):  # another Ray: its own default stands
        pass
