#!/usr/bin/env python3
"""Skeleton/solution consistency check.

For every file under solutions/<chapter>/, the skeleton <chapter>/<file> must exist and the two
must be identical outside the TODO regions. A region is written the same way in both files:

    // TODO 4 (about 6 lines; checked by [ch07_reduction][sequential]):
    //   what to write, in a few lines of comment
    // BEGIN TODO 4
    ... the student's code (skeleton) / the reference code (solution) ...
    // END TODO 4

In the skeleton, the comment right above BEGIN must say roughly how many lines the answer takes
and name the test tag that checks it, and that tag must appear in one of the chapter's tests.
A skeleton region that already holds the solution's code gives the answer away and fails too.

Usage: check_skeletons.py REPO_ROOT      (exit 1 and file:line messages on any drift)
       check_skeletons.py --self-test    (the check must reject known drifts)
"""
import pathlib
import re
import sys
import tempfile

BEGIN = re.compile(r"^\s*// BEGIN TODO (\S+)\s*$")
END = re.compile(r"^\s*// END TODO (\S+)\s*$")
HEADER = re.compile(r"// TODO (\S+) \(about \d+ lines?; checked by (\[[^\]]+\](?:\[[^\]]+\])*)\)")


def parse(path, errors):
    """Split a file into the text outside regions and the regions: (outside, regions).
    outside is a list of (line_no, text); regions maps id -> (begin_line, body lines)."""
    outside, regions, current = [], {}, None
    for no, line in enumerate(path.read_text().splitlines(), 1):
        b, e = BEGIN.match(line), END.match(line)
        if b:
            if current is not None:
                errors.append(f"{path}:{no}: BEGIN TODO {b.group(1)} inside TODO {current[0]}")
            if b.group(1) in regions:
                errors.append(f"{path}:{no}: TODO {b.group(1)} appears twice")
            current = (b.group(1), no, [])
            outside.append((no, line))
        elif e:
            if current is None or current[0] != e.group(1):
                errors.append(f"{path}:{no}: END TODO {e.group(1)} without its BEGIN")
            else:
                regions[current[0]] = (current[1], current[2])
                current = None
            outside.append((no, line))
        elif current is not None:
            current[2].append(line)
        else:
            outside.append((no, line))
    if current is not None:
        errors.append(f"{path}:{current[1]}: TODO {current[0]} is never closed by END TODO")
    return outside, regions


def chapter_test_text(chapter_dir):
    return "\n".join(p.read_text() for p in sorted(chapter_dir.glob("test_*")) if p.is_file())


def check_pair(skeleton, solution, tests_text, errors):
    sk_out, sk_regions = parse(skeleton, errors)
    so_out, so_regions = parse(solution, errors)
    for (sk_no, sk_line), (so_no, so_line) in zip(sk_out, so_out):
        if sk_line != so_line:
            errors.append(f"{skeleton}:{sk_no}: differs from {solution}:{so_no} outside TODO regions\n"
                          f"    skeleton: {sk_line.strip()}\n    solution: {so_line.strip()}")
            break
    else:
        if len(sk_out) != len(so_out):
            longer, (no, line) = ((skeleton, sk_out[len(so_out)]) if len(sk_out) > len(so_out)
                                  else (solution, so_out[len(sk_out)]))
            errors.append(f"{longer}:{no}: extra line outside TODO regions: {line.strip()}")
    if list(sk_regions) != list(so_regions):
        errors.append(f"{skeleton}: TODO regions {list(sk_regions)} but {solution} has {list(so_regions)}")
    lines = skeleton.read_text().splitlines()
    for todo_id, (begin_no, body) in sk_regions.items():
        # The TODO's instructions: the comment lines right above BEGIN.
        k = begin_no - 2
        comment = []
        while k >= 0 and lines[k].strip().startswith("//"):
            comment.insert(0, lines[k].strip())
            k -= 1
        header = next((HEADER.search(c) for c in comment if HEADER.search(c)), None)
        if not header or header.group(1) != todo_id:
            errors.append(f"{skeleton}:{begin_no}: TODO {todo_id} needs a comment above it like "
                          f"'// TODO {todo_id} (about N lines; checked by [tag]):' and instructions")
            continue
        if len(comment) < 2:
            errors.append(f"{skeleton}:{begin_no}: TODO {todo_id} says nothing about what to write")
        for tag in re.findall(r"\[[^\]]+\]", header.group(2)):
            if tag not in tests_text:
                errors.append(f"{skeleton}:{begin_no}: TODO {todo_id} names test tag {tag}, "
                              "which no test of the chapter carries")
        solution_body = so_regions.get(todo_id, (0, []))[1]
        if any(l.strip() for l in body) and body == solution_body:
            errors.append(f"{skeleton}:{begin_no}: TODO {todo_id} already holds the solution's code")


def check_repo(root):
    errors = []
    solutions = root / "solutions"
    for solution in sorted(p for p in solutions.rglob("*") if p.is_file()):
        rel = solution.relative_to(solutions)
        skeleton = root / rel
        if not skeleton.is_file():
            errors.append(f"{solution}: no skeleton counterpart {skeleton}")
            continue
        check_pair(skeleton, solution, chapter_test_text(root / rel.parts[0]), errors)
    # A skeleton file with TODO regions must have its solution.
    for chapter in sorted(root.glob("ch[0-9]*_*")):
        for skeleton in sorted(p for p in chapter.rglob("*") if p.is_file()):
            try:
                text = skeleton.read_text()
            except UnicodeDecodeError:
                continue
            if any(BEGIN.match(l) for l in text.splitlines()):
                if not (solutions / skeleton.relative_to(root)).is_file():
                    errors.append(f"{skeleton}: has TODO regions but no solutions/ counterpart")
    return errors


def self_test():
    """The check must pass a consistent pair and reject each kind of drift."""
    good_sk = ("int f() {\n  // TODO 1 (about 1 line; checked by [demo]):\n  //   return 42.\n"
               "  // BEGIN TODO 1\n  return 0;\n  // END TODO 1\n}\n")
    good_so = good_sk.replace("  return 0;\n", "  return 42;\n")
    cases = {
        "consistent": (good_sk, good_so, True),
        "drift outside a region": (good_sk, good_so.replace("int f", "long f"), False),
        "missing END": (good_sk.replace("  // END TODO 1\n", ""), good_so, False),
        "no size or tag": (good_sk.replace(" (about 1 line; checked by [demo])", ""), good_so, False),
        "unknown tag": (good_sk.replace("[demo]", "[nowhere]"), good_so.replace("[demo]", "[nowhere]"), False),
        "answer given away": (good_so, good_so, False),
    }
    failures = 0
    for name, (sk, so, should_pass) in cases.items():
        with tempfile.TemporaryDirectory() as tmp:
            root = pathlib.Path(tmp)
            (root / "ch01_demo").mkdir()
            (root / "solutions" / "ch01_demo").mkdir(parents=True)
            (root / "ch01_demo" / "f.cu").write_text(sk)
            (root / "solutions" / "ch01_demo" / "f.cu").write_text(so)
            (root / "ch01_demo" / "test_demo.cpp").write_text('TEST_CASE("x", "[demo]") {}\n')
            passed = not check_repo(root)
        if passed != should_pass:
            failures += 1
            print(f"self-test '{name}': check {'passed' if passed else 'failed'}, "
                  f"expected it to {'pass' if should_pass else 'fail'}")
    print("self-test:", "ok" if failures == 0 else f"{failures} failure(s)")
    return 1 if failures else 0


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "--self-test":
        return self_test()
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    errors = check_repo(pathlib.Path(sys.argv[1]).resolve())
    for e in errors:
        print(e)
    print("skeletons and solutions are consistent" if not errors else f"{len(errors)} problem(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
