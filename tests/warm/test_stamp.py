"""The package stamp a warm server compares before each invocation: any change to the installed code shows."""

from __future__ import annotations

import os
from pathlib import Path

from mini_agent.warm.stamp import PACKAGE, package_stamp


def a_package(root: Path) -> Path:
    for name, text in {"__init__.py": "", "a.py": "x = 1\n", "sub/b.py": "y = 2\n", "sub/data.json": "{}"}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (root / "__pycache__").mkdir()
    (root / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"compiled")
    return root


def test_the_stamp_changes_with_any_source_file_and_only_then(tmp_path: Path):
    root = a_package(tmp_path / "pkg")
    first = package_stamp(str(root))
    assert [path for path, _, _ in first[2]] == ["__init__.py", "a.py", "sub/b.py", "sub/data.json"]
    assert package_stamp(str(root)) == first
    (root / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"recompiled")  # bytecode is not the code
    (root / "notes.txt").write_text("not code")
    assert package_stamp(str(root)) == first

    stat = (root / "sub" / "b.py").stat()
    os.utime(root / "sub" / "b.py", ns=(stat.st_atime_ns, stat.st_mtime_ns + 1))  # touched
    touched = package_stamp(str(root))
    assert touched != first
    (root / "sub" / "c.py").write_text("")  # added
    added = package_stamp(str(root))
    assert added != touched
    (root / "a.py").unlink()  # removed
    assert package_stamp(str(root)) not in (first, touched, added)


def test_the_installed_package_is_stamped_whole():
    files = [path for path, _, _ in package_stamp()[2]]
    assert "entry.py" in files and "warm/stamp.py" in files and len(files) > 200
    assert Path(PACKAGE, "entry.py").is_file()
