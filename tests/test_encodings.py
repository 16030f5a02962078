"""A CSV in another encoding than UTF-8 is refused naming the encoding and how to read
it, and read when told; compressed CSVs are read as they are."""

from __future__ import annotations

import bz2
import codecs
import gzip
import lzma
import zipfile

import pandas as pd
import pytest

from audit import read_rates, read_scores
from audit.cli import main
from audit.exceptions import RatesError
from audit.tables import common

TEXT = "algorithm,group,fmr,fnmr\nvendor-é,Fémale,0.0001,0.01\nvendor-é,Male,0.0002,0.02\n"


NO_BOM = "every other byte is a NUL byte, and there is no byte-order mark"


def same(table: pd.DataFrame) -> None:
    got = table.reset_index(drop=True)
    assert got[["algorithm", "group"]].astype(str).values.tolist() == [
        ["vendor-é", "Fémale"],
        ["vendor-é", "Male"],
    ]
    assert got["fmr"].tolist() == [1e-4, 2e-4] and got["fnmr"].tolist() == [0.01, 0.02]


@pytest.mark.parametrize(
    ("codec", "words", "how", "told"),
    [
        ("utf-16", "UTF-16", "it starts with the byte-order mark of UTF-16", "utf-16"),
        ("utf-32", "UTF-32", "it starts with the byte-order mark of UTF-32", "utf-32"),
        ("utf-16-le", "UTF-16", NO_BOM, "utf-16-le"),
        ("utf-16-be", "UTF-16", NO_BOM, "utf-16-be"),
    ],
)
def test_utf16_and_utf32_are_named(tmp_path, codec, words, how, told):
    path = tmp_path / "rates.csv"
    path.write_bytes(TEXT.encode(codec))
    with pytest.raises(RatesError) as error:
        read_rates(path)
    assert str(error.value) == common.OTHER_ENCODING.format(
        source=str(path), encoding=words, how=how, codec=told
    )
    same(read_rates(path, encoding=told))


@pytest.mark.parametrize("codec", ["latin-1", "cp1252"])
def test_single_byte_encodings_are_named_and_read_when_told(tmp_path, codec):
    path = tmp_path / "rates.csv"
    data = TEXT.replace("vendor-é", "vendor-é’" if codec == "cp1252" else "vendor-é")
    path.write_bytes(data.encode(codec))
    offset = data.encode(codec).index("é".encode(codec))
    with pytest.raises(RatesError) as error:
        read_rates(path)
    assert str(error.value) == common.NOT_UTF8.format(source=str(path), byte=0xE9, offset=offset)
    table = read_rates(path, encoding=codec)
    assert table["group"].iloc[0] == "Fémale"


@pytest.mark.parametrize(
    ("suffix", "opener"),
    [(".csv.gz", gzip.open), (".csv.bz2", bz2.open), (".csv.xz", lzma.open), (".csv", gzip.open)],
)
def test_compressed_files_are_read_as_they_are(tmp_path, suffix, opener):
    path = tmp_path / f"rates{suffix}"
    with opener(path, "wb") as handle:
        handle.write(TEXT.encode("utf-8"))
    same(read_rates(path))


def test_a_zip_archive_is_refused_with_what_to_do(tmp_path):
    path = tmp_path / "rates.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("rates.csv", TEXT)
    with pytest.raises(RatesError) as error:
        read_rates(path)
    assert str(error.value) == common.ZIP_FILE.format(source=str(path))


def test_a_truncated_gzip_is_refused_not_a_bug(tmp_path):
    path = tmp_path / "rates.csv.gz"
    path.write_bytes(gzip.compress(TEXT.encode() * 50)[:-30])
    with pytest.raises(RatesError, match="cannot be read as CSV"):
        read_rates(path)


def test_the_decompressed_size_counts_against_max_bytes(tmp_path):
    path = tmp_path / "big.csv.gz"
    path.write_bytes(gzip.compress(("x" * 1000 + "\n").encode() * 1000))
    with pytest.raises(RatesError) as error:
        read_rates(path, max_bytes=100_000)
    assert str(error.value) == common.TOO_LARGE.format(source=str(path), limit=100_000)


def test_scores_and_the_command_line_take_the_encoding(tmp_path, capsys):
    scores = tmp_path / "scores.csv"
    scores.write_bytes("algorithm,score,mated,group\na,0.9,1,Fé\na,0.1,0,Fé\n".encode("utf-16"))
    with pytest.raises(Exception, match="the file is in UTF-16"):
        read_scores(scores)
    assert read_scores(scores, encoding="utf-16")["group_1"].tolist() == ["Fé", "Fé"]
    rates = tmp_path / "rates.csv"
    rates.write_bytes(TEXT.encode("cp1252"))
    assert main(["check", str(rates)]) == 3
    assert "--encoding cp1252" in capsys.readouterr().err
    assert main(["check", "--encoding", "cp1252", str(rates)]) == 0
    assert "groups: Fémale, Male" in capsys.readouterr().out
    assert main(["check", "--encoding", "klingon-8", str(rates)]) == 2
    assert "error: --encoding: expected the name of a text encoding" in capsys.readouterr().err


@pytest.mark.parametrize("codec", ["utf-16", "utf-32"])
def test_utf16_told_without_its_byte_order_mark_asks_for_the_byte_order(tmp_path, codec):
    """Python reads ``utf-16`` only from a byte-order mark: a file without one, told
    ``--encoding utf-16``, was an internal error (UnicodeError, status 70)."""
    path = tmp_path / "rates.csv"
    path.write_bytes(TEXT.encode(f"{codec}-le"))
    with pytest.raises(RatesError) as error:
        read_rates(path, encoding=codec)
    assert str(error.value) == common.NO_BYTE_ORDER_MARK.format(source=str(path), codec=codec)
    same(read_rates(path, encoding=f"{codec}-le"))  # as it says


def test_a_file_an_encoding_refuses_as_a_whole_is_bad_input(tmp_path, capsys):
    """Punycode's decoder refuses the text with a UnicodeError at no one byte: bad input
    (status 3) in Python's words, not a bug of audit's (status 70)."""
    path = tmp_path / "rates.csv"
    path.write_bytes(b"algorithm,group,fmr,fnmr\na,F,0.1,0.1\n")  # ASCII, as punycode reads
    assert main(["check", "--encoding", "punycode", str(path)]) == 3
    err = capsys.readouterr().err
    assert err.startswith(f"audit: error: {path}: the file cannot be read as punycode: ")
    assert "internal error" not in err and len(err.splitlines()) == 1


def test_a_byte_refused_where_the_decoder_held_the_bytes_before_it_is_named_where_it_is(
    tmp_path, monkeypatch
):
    """The refused byte is named by its place in the file also where the decoder held
    bytes of the chunk before (a character cut by the chunk's end), and at the file's end
    (an odd last byte of UTF-16)."""
    monkeypatch.setattr(common, "_CHUNK", 8)
    path = tmp_path / "rates.csv"
    data = "algo,é".encode() + b"\xff" + b",x\n"  # é is bytes 5-6: cut after byte 7 of 8
    path.write_bytes(data)
    with pytest.raises(RatesError) as error:
        read_rates(path, encoding="utf-8")
    assert str(error.value) == common.NOT_ENCODING.format(
        source=str(path), byte=0xFF, offset=data.index(b"\xff"), encoding="utf-8"
    )
    odd = TEXT.encode("utf-16-le") + b"\n"
    path.write_bytes(odd)
    with pytest.raises(RatesError) as error:
        read_rates(path, encoding="utf-16-le")
    assert str(error.value) == common.NOT_ENCODING.format(
        source=str(path), byte=0x0A, offset=len(odd) - 1, encoding="utf-16-le"
    )


def test_the_header_a_score_report_checks_first_is_read_as_the_rows_are(tmp_path):
    """``audit scores FILE --encoding utf-16`` was refused before any work: the header was
    read as UTF-8 and split at every comma, whatever the encoding, the compression or
    the quoting. It is read as read_scores reads the file."""
    from audit.tables.scores import ScoresError, check_columns

    names = ["algorithm", "score", "mated", "group"]
    text = "algorithm,score,mated,group\na,0.9,1,Fé\na,0.1,0,Fé\n"
    for file, data, encoding in [
        ("utf16.csv", text.encode("utf-16"), "utf-16"),
        ("latin.csv", text.encode("latin-1"), "latin-1"),
        ("quoted.csv", text.replace("group", '"group"').encode(), None),
        ("packed.csv.gz", gzip.compress(text.encode()), None),
    ]:
        path = tmp_path / file
        path.write_bytes(data)
        assert check_columns(path, encoding=encoding) == names, file
        assert read_scores(path, encoding=encoding)["group_1"].tolist() == ["Fé", "Fé"]
    path = tmp_path / "le.csv"
    path.write_bytes(text.encode("utf-16-le"))
    with pytest.raises(ScoresError) as error:
        check_columns(path)
    assert str(error.value) == common.OTHER_ENCODING.format(
        source=str(path), encoding="UTF-16", how=NO_BOM, codec="utf-16-le"
    )


def test_an_encoding_given_for_a_table_that_is_not_text_is_refused(tmp_path, capsys):
    """``--encoding latin-1`` on a Parquet file, a folder of them streamed, a DataFrame or
    the built-in VoxCeleb scores was read as if not given, without a word."""
    from audit.exceptions import EXIT_INPUT, EXIT_USAGE
    from audit.tables.scores import ScoresError, check_columns

    frame = pd.DataFrame({"algorithm": "a", "group": ["F", "M"], "fmr": [1e-4, 2e-4]})
    path = tmp_path / "rates.parquet"
    frame.to_parquet(path, index=False)
    for source in (path, frame):
        with pytest.raises(RatesError) as error:
            read_rates(source, encoding="latin-1")
        name = str(path) if source is path else "<DataFrame>"
        assert str(error.value) == common.ENCODING_NOT_TEXT.format(source=name, encoding="latin-1")
    scores = pd.DataFrame({"algorithm": "a", "score": [0.9, 0.1], "mated": [1, 0], "group": "F"})
    folder = tmp_path / "scores"
    folder.mkdir()
    scores.to_parquet(folder / "s.parquet", index=False)
    with pytest.raises(ScoresError, match="reads a CSV's text"):
        check_columns(folder / "s.parquet", encoding="latin-1")
    with pytest.raises(ScoresError, match="reads a CSV's text"):
        read_scores(scores, encoding="latin-1")
    reports = ["--reports-dir", str(tmp_path / "r")]
    assert main(["scores", str(folder), "--memory", "1GB", "--encoding", "latin-1", *reports]) == (
        EXIT_INPUT
    )
    assert "reads a CSV's text" in capsys.readouterr().err
    assert main(["scores", "--encoding", "latin-1", *reports]) == EXIT_USAGE
    assert "does not apply to the built-in VoxCeleb scores" in capsys.readouterr().err


@pytest.mark.parametrize("told", ["utf-8", "UTF8", "utf_8", "utf-8-sig", None])
def test_a_utf8_byte_order_mark_is_skipped_whether_or_not_utf8_is_named(tmp_path, told):
    """A UTF-8 file with a byte-order mark, told ``--encoding utf-8``, kept the mark as
    the first character of its first column's name: "column 'algorithm' is missing"."""
    from audit.tables.scores import check_columns

    rates = tmp_path / "rates.csv"
    rates.write_bytes(codecs.BOM_UTF8 + TEXT.encode())
    same(read_rates(rates, encoding=told))
    scores = tmp_path / "scores.csv"
    scores.write_bytes(codecs.BOM_UTF8 + b"algorithm,score,mated,group\na,0.9,1,F\n")
    assert check_columns(scores, encoding=told)[0] == "algorithm"
    assert read_scores(scores, encoding=told)["algorithm"].tolist() == ["a"]


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-be", "utf-32", "latin-1", "utf-8", None])
def test_a_nul_character_is_named_at_its_byte_in_any_encoding(tmp_path, codec):
    """In a file read as UTF-16, the NUL character was named by its place among the
    characters (40), not the bytes (82)."""
    before = "algorithm,group,fmr,fnmr\nvendor-é,F,0.1,0.2\nvendor-é,M"
    path = tmp_path / "rates.csv"
    path.write_bytes((before + "\0,0.1,0.2\n").encode(codec or "utf-8"))
    with pytest.raises(RatesError) as error:
        read_rates(path, encoding=codec)
    offset = len(before.encode(codec or "utf-8"))  # with the byte-order mark of UTF-16 and -32
    assert str(error.value) == common.NUL_BYTE.format(source=str(path), offset=offset)
