"""Mystery (must-hit-by) levels: a trigger nobody sees before the hit and anybody checks after.

A mystery level has a **floor** (its seed) and a **ceiling** (it must hit by). At each reseed
the trigger is drawn uniformly in ``[floor, ceiling)`` to the cent from the operating system's
CSPRNG (:func:`~controller.mystery.core.draw_trigger`); the level hits when a contribution
carries its meter to or past the trigger, and the wager whose contribution crossed it wins.
Because every cent of the range is equally likely to be the trigger, every cent wagered (at
the level's rate) has the same chance of being the one that crosses it: Mich. Admin. Code
R 432.1841(2), docs/rules.md, "Mystery levels: the sealed trigger".

The package is the pure core; the edges that hold the secret are elsewhere:

* :mod:`controller.mystery.core`: the draw, the commitment (SHA-256 over a domain tag and the
  draw's identity, trigger and nonce), the signed draw statement, the reveal and every check
  anyone runs on them (:func:`~controller.mystery.core.reveal_holds`,
  :func:`~controller.mystery.core.hit_holds`). No I/O, no state.
* :mod:`controller.mystery.keeper`: the keeper's rules as pure functions
  (:func:`~controller.mystery.keeper.judge_draw`, :func:`~controller.mystery.keeper.judge_check`,
  as :func:`controller.security.signer.judge` is the signer's rule for heads), the
  :class:`~controller.mystery.keeper.Keeper` interface the daemon asks, the client's alarm rule
  (:func:`~controller.mystery.keeper.probed`) and the in-process keeper
  (:class:`~controller.mystery.keeper.LocalKeeper`, the demo's and a ``key_file``'s, as a
  :class:`~controller.security.controller_key.ControllerKey` is the in-process signer).
* :mod:`controller.mystery.store`: the sealed draws' file (0600, replaced atomically).
* The signer process keeps the sealed triggers beside its marks
  (controller/service/signer_server.py) and the daemon asks it through
  :class:`~controller.runtime.remote_signer.RemoteSigner`, which is a keeper too.
"""
