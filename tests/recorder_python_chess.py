#!/usr/bin/env python3
"""Reads every PGN file the recorder's crash test left behind with python-chess and checks
that each game reads back without errors and with the moves the recorder wrote.

Usage: recorder_python_chess.py DIR   (DIR holds *.pgn and expected-moves.json)
"""
import json
import pathlib
import sys

import chess.pgn


def main() -> int:
    folder = pathlib.Path(sys.argv[1])
    expected = json.loads((folder / "expected-moves.json").read_text())
    failures = 0
    for name, games in sorted(expected.items()):
        with open(folder / name, encoding="utf-8") as handle:
            for index, moves in enumerate(games):
                game = chess.pgn.read_game(handle)
                if game is None:
                    print(f"{name}: game {index + 1} missing")
                    failures += 1
                    continue
                if game.errors:
                    print(f"{name}: game {index + 1}: {game.errors}")
                    failures += 1
                read = [move.uci() for move in game.mainline_moves()]
                if read != moves:
                    print(f"{name}: game {index + 1}: python-chess read {read}, expected {moves}")
                    failures += 1
            if chess.pgn.read_game(handle) is not None:
                print(f"{name}: more games than expected")
                failures += 1
    checked = sum(len(g) for g in expected.values())
    print(f"python-chess: {checked} games in {len(expected)} files, {failures} failures")
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
