"""Client models generated from docs/asyncapi.json compile under strict compilers.

A mobile or web team builds from the contract alone: ``@asyncapi/modelina``
(an npm dev dependency, ``npm ci``) turns it into TypeScript interfaces and
classes, checked by ``tsc --strict``, and into Java classes, checked by
``javac`` with every lint but ``cast`` as an error (modelina writes redundant
casts in its enums). A contract with merged discriminator values, unnamed
unions or missing tags fails here.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tools import schemas
from tools.schemas import common

# One worker generates and compiles the models (half a CPU-minute), not each that runs one.
pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("client-models")]

ROOT = Path(__file__).resolve().parents[2]
MODULES = ROOT / "node_modules"
GENERATE = ROOT / "tests" / "contract" / "models.mjs"
CLIENT = ROOT / "tests" / "contract" / "client.ts"
TSCONFIG = {
    "compilerOptions": {
        "strict": True,
        "noEmit": True,
        "noImplicitReturns": True,
        "target": "es2022",
        "module": "es2022",
        "moduleResolution": "bundler",
        "skipLibCheck": True,
    },
    "include": ["ts/**/*.ts"],
}


def _run(args: list[str], cwd: Path) -> str:
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, f"{' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    node = shutil.which("node")
    if node is None or not (MODULES / "@asyncapi" / "modelina").is_dir():
        pytest.fail("the contract tools are missing: run `npm ci` (make install does)")
    out = tmp_path_factory.mktemp("models")
    _run([node, str(GENERATE), str(ROOT / schemas.ASYNCAPI), str(out)], ROOT)
    return out


def test_the_asyncapi_parser_finds_nothing_to_report(generated: Path) -> None:
    """@asyncapi/parser (the official one) validates the document: no error, no warning."""
    diagnostics = json.loads((generated / "diagnostics.json").read_text(encoding="utf-8"))
    assert diagnostics == []


def test_a_generator_of_asyncapi_3_0_reads_the_document_relabeled(generated: Path) -> None:
    """What the document says of 3.0-only generators holds: relabeled ``3.0.0`` it is a
    valid 3.0 document, and modelina given it as an object (not through the 3.1 parser)
    makes the very interfaces the file URL gives."""
    relabeled = json.loads((generated / "diagnostics-3.0.json").read_text(encoding="utf-8"))
    # The parser only says that 3.1 is newer.
    assert [d["code"] for d in relabeled] == ["asyncapi-latest-version"]
    ours, theirs = generated / "ts" / "interfaces", generated / "relabeled-3.0"
    names = _names(ours, ".ts")
    assert len(names) > len(common.SERVER_MESSAGES) and _names(theirs, ".ts") == names
    for name in sorted(names):
        mine = (ours / f"{name}.ts").read_text(encoding="utf-8")
        assert (theirs / f"{name}.ts").read_text(encoding="utf-8") == mine, name


def _names(folder: Path, suffix: str) -> set[str]:
    return {p.stem for p in folder.glob(f"*{suffix}")}


def test_every_message_and_move_gets_a_model_of_its_own(generated: Path) -> None:
    expected = {m.__name__ for m in (*common.CLIENT_MESSAGES, *common.SERVER_MESSAGES)}
    moves = {"DrawModel", "TakePileModel", "JokerButtonModel", "MeldModel", "DiscardModel"}
    for folder in (generated / "ts" / "interfaces", generated / "ts" / "classes"):
        names = _names(folder, ".ts")
        assert expected | moves <= names
        # Each move's tag is its own one-value type, not one enum merged from all five.
        for move in moves:
            tag = (folder / f"{move}Type.ts").read_text(encoding="utf-8")
            assert tag.count(" = ") == 1, tag
        assert {"ErrorCode", "QueueLeftReason", "Stake"} <= names


def test_typescript_models_compile_strictly(generated: Path) -> None:
    """The models, and a client's message handling written against them (client.ts)."""
    shutil.copy(CLIENT, generated / "ts" / "client.ts")
    (generated / "tsconfig.json").write_text(json.dumps(TSCONFIG), encoding="utf-8")
    tsc = MODULES / "typescript" / "bin" / "tsc"
    _run([str(shutil.which("node")), str(tsc), "-p", str(generated / "tsconfig.json")], generated)


def test_java_models_compile_strictly(generated: Path) -> None:
    javac = shutil.which("javac")
    if javac is None:
        pytest.skip("no JDK: install one (apt-get install default-jdk-headless) to compile Java")
    sources = sorted(str(p) for p in (generated / "java").rglob("*.java"))
    assert len(sources) > len(common.SERVER_MESSAGES)
    classes = generated / "classes"
    _run([javac, "-Xlint:all,-cast", "-Werror", "-d", str(classes), *sources], generated)
    assert (classes / "canasta" / "contract" / "ViewMessage.class").is_file()
