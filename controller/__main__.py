"""``python -m controller`` is ``jackpotd``; named by its path, it launches the service.

systemd/jackpotd.service starts ``python -I -S -B -X pycache_prefix=... <this file> run ...``
(docs/security.md section 2.4): isolated, so that no ``PYTHON*`` variable, user site folder or
script folder reaches the import path, and without ``site``, so that no ``.pth`` file and no
``sitecustomize`` runs. The import path then holds the standard library alone, and this file,
with nothing but the standard library and the controller's own stdlib-only security modules:

1. works out the path ``site`` would have made (the install folders and the folders their
   ``.pth`` files name, each ``.pth`` read once and kept; none of its lines runs) and puts it in
   place (:mod:`controller.security.import_path`);
2. for ``run``, hashes the manifest of that path (every entry, every ``.pth`` file's content,
   every distribution, the interpreter) before any module of a dependency is imported;
3. only then imports the rest of the controller (:mod:`controller.cli.launch`), which compares
   that manifest with the approved one in the journal and runs the import lines of the
   ``.pth`` files, as read in step 1, only if it matches; then the command runs.
"""

import os
import sys


def _launch() -> int:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # noqa: PTH100, PTH120
    stdlib = list(sys.path)
    # The controller's own package, for its standard-library-only modules below; the path is
    # replaced by the plan before anything else is imported.
    sys.path.append(root)
    from controller.security.import_path import environment_prefixes, planned  # noqa: PLC0415

    # As site would: the virtual environment's prefix (site reads pyvenv.cfg, not Python),
    # before the plan asks site for the install folders: Debian's site.getsitepackages names a
    # prefix's site-packages only when sys.prefix is not the base prefix (a virtual
    # environment), so without it the environment's own folder would be planned as an ordinary
    # folder, unlike the manifest an operator's jackpotd approved (docs/operations.md).
    sys.prefix = sys.exec_prefix = environment_prefixes()[0]
    plan = planned(root, stdlib)
    sys.path[:] = plan.entries
    argv = sys.argv[1:]
    words = [word for word in argv if not word.startswith("-")]
    if words[:1] == ["run"]:
        from controller.security.manifest import current, hashed_at_launch  # noqa: PLC0415

        manifest = current("", import_path=plan)
        hashed_at_launch(manifest)
        from controller.cli.launch import serve_checked  # noqa: PLC0415

        return serve_checked(argv, plan, manifest)
    from controller.cli import main  # noqa: PLC0415

    return main(argv)


if __spec__ is None:  # named by its path (the unit), not run with -m
    sys.exit(_launch())

from controller.cli import main  # noqa: E402

sys.exit(main())
