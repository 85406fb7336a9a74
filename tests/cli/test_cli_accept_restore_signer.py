"""After an accepted restore the signer's marks still refuse the journal until root retires them.

docs/security.md, "The key and the writer are split" and "the signer's marks after a restore";
docs/operations.md, "The signer". A real ``jackpotd signer`` process holds the controller key
and signs every head of a signed journal (tests/support/runtime/signer_process.py). The journal is
restored from a back-up taken before rows the signer signed, and two managers accept the rows it
loses (``jackpotd accept-restore``): the ledger takes the lost mark, but the signer, which never
reads the journal, still holds its own mark above the restored head and refuses to sign it, so
the controller does not start. Root's documented procedure (stop the signer, move its marks file
aside, start it) lets the restored journal start and be signed on. From then on the signer's new
marks refuse to go back again: the journal rolled back to the back-up once more (the high-water
file removed, as a shell as the service user could) is refused by the signer. A start refused
closes the journal it opened, so no write-ahead log is left beside it for a file put back in
its place to take as its own.
"""

from __future__ import annotations

import asyncio
import gc
import shutil
from typing import TYPE_CHECKING

import pytest
from support.cli.accept_restore import accept, played_on, restored, start
from support.runtime.signer_process import SignerProcess, start_signer

from controller.journal.high_water import high_water_path, read_high_water, sign_head
from controller.ledger_journal.sqlite import Journal
from controller.runtime.checkpointing import StoredStateError
from controller.runtime.remote_signer import RemoteSigner
from controller.security.controller_key import write_key
from controller.security.signer import SignerRefusedError, as_controller_key

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from controller.security.controller_key import ControllerKey

__all__ = ["restored"]  # the fixture, used by name


@pytest.fixture
def restored_signer(tmp_path: Path, key: ControllerKey) -> Iterator[SignerProcess]:
    """The signer of controller ``c1``, holding the key the restored journal's heads were under."""
    write_key(tmp_path / "signer.key", key)  # the key ``restored`` signed with
    process = start_signer(tmp_path / "signer.key", tmp_path, "c1")
    try:
        yield process
    finally:
        if process.process.poll() is None:
            process.process.kill()
            process.process.communicate()


def test_the_signer_refuses_an_accepted_restore_until_root_retires_its_marks_then_holds_the_new(
    restored: tuple[Path, object],
    restored_signer: SignerProcess,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    path, _site = restored
    # Before the restore, the signer signed the journal's heads up to the one the file holds.
    lost = read_high_water(high_water_path(str(path)))
    assert lost is not None
    remote = RemoteSigner(restored_signer.socket, timeout_s=5.0)
    # The signer signed that head (as it signs every head the service asks for): its mark.
    sign_head(as_controller_key(remote), "c1", lost.journal, (lost.seq, lost.hash), lost.at)
    assert accept(capsys, path, "mgr", "mgr2")[0] == 0
    gc.disable()  # only the refused start's own close may end its connection
    try:
        with pytest.raises(
            (SignerRefusedError, StoredStateError), match=r"the signer refused.*went back"
        ):
            start(path, remote)  # type: ignore[arg-type]
        # Closed: no write-ahead log is left for the file put back below to take as its own.
        assert not path.with_name(f"{path.name}-wal").exists()
    finally:
        gc.enable()
    # Root's procedure: stop the signer, move its marks aside, start it again.
    assert restored_signer.stop() is not None
    retired = restored_signer.state.rename(tmp_path / "incident-2211-signer-marks.json")
    assert retired.exists()
    again = start_signer(tmp_path / "signer.key", tmp_path, "c1")
    try:
        remote = RemoteSigner(again.socket, timeout_s=5.0)
        shutil.copy(path, tmp_path / "accepted.db")  # the restored journal, accepted
        start(path, remote)  # type: ignore[arg-type]
        asyncio.run(played_on(path, remote, 2))  # type: ignore[arg-type]
        after = read_high_water(high_water_path(str(path)))
        assert after is not None
        with Journal(path) as journal:
            assert (after.seq, after.hash) == journal.head
        # The service user rolls back once more, and removes the file: the signer refuses.
        path.unlink()
        shutil.copy(tmp_path / "accepted.db", path)
        high_water_path(str(path)).unlink()
        with pytest.raises(
            (SignerRefusedError, StoredStateError), match=r"the signer refused.*went back"
        ):
            start(path, remote)  # type: ignore[arg-type]
    finally:
        again.process.kill()
        again.process.communicate()
