"""A game shown the physical way (dice, panels, camera; no concealed draws, no hidden hands)
gives the service exactly the game that was played."""

import pytest

from hardware_sims.generator import generate_game
from hardware_sims.table import DirectOutputs, TableSimulator
from tablesvc.engine.engine import Engine, Rejected, apply
from tablesvc.engine.events import Draw, HandStart
from tablesvc.engine.results import HandResult
from tablesvc.replay import load_record
from tablesvc.service.fusion import UNDO, Fusion
from tests.conftest import mjlog_files
from vision.table.observations import TileDiscarded

FILES = mjlog_files()


def watch(record):
    """Play ``record`` through the simulator into fusion and a fresh engine; return both and what was seen."""
    engine = Engine()
    seen, submitted, results = [], [], []

    def would_accept(event):
        try:
            apply(engine.state, event)
        except Rejected:
            return False
        return True

    fusion = Fusion(lambda: engine.state, would_accept)

    def deliver(observation):
        seen.append(observation)
        for action in fusion.observe(observation):
            assert action.event != UNDO
            submitted.append(action.event)
            ended = [o for o in engine.apply(action.event) if isinstance(o, HandResult)]
            if ended:
                fusion.hand_ended()  # as the service does once the engine accepted the end of the hand
            results.extend(ended)

    TableSimulator(record, DirectOutputs(deliver), start_game=engine.apply).run()
    return engine, results, seen, submitted


def test_generated_game_is_reconstructed_from_what_the_table_shows():
    game = generate_game(11)
    engine, results, seen, submitted = watch(game)
    assert [r.deltas for r in results] == [h.deltas for h in game.hands]
    assert engine.state.final is not None and engine.state.final.scores == game.final_scores
    # the service never saw a draw nor a concealed hand
    assert not any(isinstance(e, Draw) for e in submitted)
    assert all(e.hands is None for e in submitted if isinstance(e, HandStart))
    discards = [o for o in seen if isinstance(o, TileDiscarded)]
    assert len(discards) == sum(1 for e in game.events if type(e).__name__ == "Discard")


@pytest.mark.skipif(not FILES, reason="../shared/data/tenhou-mjlog not found beside the checkout")
@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_real_game_through_the_physical_path(path):
    record = load_record(path)
    engine, results, _, submitted = watch(record)
    assert [r.deltas for r in results] == [h.deltas for h in record.hands if h.deltas is not None]
    if record.final_scores is not None:
        assert engine.state.final.scores == record.final_scores
    assert not any(isinstance(e, Draw) for e in submitted)
