"""The stream overlay in a real headless Chromium, fed by a real table service over a real Mosquitto.

A generated game (seed 17) is shown event by event through the table
simulator; at each moment the overlay's DOM must show what the service's own
state says: the riichi tile turned, a call's tile dimmed in the pond and turned
in the meld, the ron with ura dora (winner, payer, hand, win tile, yaku, limit,
payments by name), the exhaustive draw (tenpai, deltas), the final ranking with
uma. A page whose connection is cut mid-hand resumes from Last-Event-ID and
misses no result. Screenshots at 1920x1080 and 1280x720 go to docs/img when
``TABLESVC_SCREENSHOTS=docs/img``.
"""

from __future__ import annotations

import json
import time

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from hardware_sims.network import CuttableProxy
from tablesvc.engine.engine import Engine
from tablesvc.engine.events import Call, Discard, ExhaustiveDraw, GameStart, HandStart, Ron, Tsumo
from tablesvc.engine.results import HandResult
from tablesvc.mqtt.payloads import state_payload
from tests import web_support
from tests.feed_schemas import validate
from tests.web_support import LiveTable, shot, viewport, wait_js, wait_seq

# the module's own Mosquitto, web server and Chromium (tests/web_support.py)
broker, web, browser = web_support.broker, web_support.web, web_support.browser


def _texts(driver, css: str) -> list[str]:
    return driver.execute_script(f"return [...document.querySelectorAll({css!r})].map(e => e.textContent)")


def _attrs(driver, css: str, name: str) -> list[str]:
    return driver.execute_script(
        f"return [...document.querySelectorAll({css!r})].map(e => e.getAttribute({name!r}))")


def _signed(v: int) -> str:
    return f"+{v:,}" if v > 0 else f"−{-v:,}" if v < 0 else "±0"


def _hand(state) -> dict:
    """What the panel must show of the service's state of the hand in play (or just dealt)."""
    h = state.hand
    return {"round": h.round, "honba": h.honba, "sticks": h.sticks, "dealer": h.dealer, "scores": list(state.scores),
            "riichi": [s.riichi for s in h.seats]}


def _panel(driver, names, hand: dict) -> None:
    """The overlay's side panel and the centre of the felt show ``hand`` (:func:`_hand`): the round, honba and
    riichi sticks, each seat's wind and the dealer's mark (on the player card and on the felt), the scores with
    each player's place and difference to the leader, the riichi sticks laid down."""
    round_text = f"{('East', 'South', 'West', 'North')[hand['round'] // 4]} {hand['round'] % 4 + 1}"
    assert _texts(driver, ".centre .round") == [round_text]
    assert _texts(driver, ".title .round") == [round_text]
    assert _texts(driver, ".centre .honba") == [f"×{hand['honba']}"]
    assert _texts(driver, ".centre .sticks") == [f"×{hand['sticks']}"]
    winds = ["ESWN"[(seat - hand["dealer"]) % 4] for seat in range(4)]
    assert _texts(driver, ".player .wind") == winds
    assert _texts(driver, ".side .plate .wind") == winds
    marked = "return [...document.querySelectorAll(%r)].map(e => e.closest('[data-seat]').dataset.seat)"
    assert driver.execute_script(marked % ".player .wind.dealer") == [str(hand["dealer"])]
    assert driver.execute_script(marked % ".side .plate .wind.dealer") == [str(hand["dealer"])]
    assert _texts(driver, ".player .name") == list(names)
    scores = hand["scores"]
    assert _texts(driver, ".player .score") == [f"{x:,}" for x in scores]
    assert _texts(driver, ".side .plate .score") == [f"{x:,}" for x in scores]
    order = sorted(range(4), key=lambda seat: (-scores[seat], seat))
    ordinal = {0: "1st", 1: "2nd", 2: "3rd", 3: "4th"}
    diffs = [ordinal[order.index(seat)] + ("" if scores[seat] == scores[order[0]] else
                                           f" · {_signed(scores[seat] - scores[order[0]])}") for seat in range(4)]
    assert _texts(driver, ".player .diff") == diffs
    assert driver.execute_script(marked % ".side .plate .riichi-stick") == [
        str(seat) for seat in range(4) if hand["riichi"][seat]]


def _result_moment(driver, names, ended: dict, result, state) -> None:
    """Between hands, with the result card up: the panel and the felt show the hand that ended, as it ended
    (``ended``: :func:`_hand` of its last state), each score with the result's payment beside it, which with it
    makes the score the service now holds; nothing of the next deal yet."""
    _panel(driver, names, ended)
    assert _texts(driver, ".player .delta") == [_signed(d) for d in result.deltas]
    assert [ended["scores"][seat] + result.deltas[seat] for seat in range(4)] == list(state.scores)
    assert state.round != ended["round"] or state.honba != ended["honba"]  # the feed already says the next deal


def _ura_ron_index(table: LiveTable) -> int:
    """The record's next ron after the current point that scores ura dora (the record has full information)."""
    engine = Engine()
    for index, event in enumerate(table.record.events):
        outputs = engine.apply(event)
        if index >= table.index and isinstance(event, Ron) and any(
                n == "Ura Dora" for o in outputs if isinstance(o, HandResult) for w in o.wins for n, _ in w.yaku):
            return index
    raise AssertionError("the scripted game has no ron with ura dora after this point")


def test_the_overlay_shows_a_scripted_game(broker, web, browser, tmp_path):
    table = LiveTable(broker.url, tmp_path / "data", table="t1").start()
    try:
        names = table.record.players
        browser.get(f"{web.url}/overlay/club/t1")
        viewport(browser, 1920, 1080)

        # ---- the first hand ends in an exhaustive draw: who was tenpai, what moved
        table.play_to(next(i for i, e in enumerate(table.record.events) if isinstance(e, ExhaustiveDraw)))
        ended = _hand(table.service.table.state)
        table.play_until(lambda e: isinstance(e, ExhaustiveDraw))
        wait_seq(browser, table.seq)
        draw = table.service.table.state.results[-1]
        _result_moment(browser, names, ended, draw, table.service.table.state)
        wait_js(browser, "document.querySelector('.draw-card')")
        ready = _texts(browser, ".draw-card .tenpai .ready")
        assert ready == [f"{names[s]}: tenpai" for s in range(4) if draw.tenpai[s]]
        assert _texts(browser, ".draw-card .payment .delta") == [_signed(d) for d in draw.deltas]
        shot(browser, "overlay-draw-1080", backdrop=True)

        # ---- a riichi: the tile lies sideways in its pond, the player's card says RIICHI
        table.play_until(lambda e: isinstance(e, Discard) and e.riichi)
        wait_seq(browser, table.seq)
        riichi = table.record.events[table.index - 1]
        pond = f".side[data-seat='{riichi.seat}'] .pond .tile"
        assert _attrs(browser, f"{pond}.riichi", "data-tile") == [riichi.tile.mjai]
        assert "RIICHI" in _texts(browser, f".player[data-seat='{riichi.seat}'] .riichi-badge")
        table.play_to(table.index + 1)  # the next player draws: the riichi is accepted, its stick on the table
        wait_seq(browser, table.seq)
        state = table.service.table.state
        assert state.hand.seats[riichi.seat].riichi and state.hand.sticks >= 1 and state.hand.honba >= 1
        _panel(browser, names, _hand(state))
        assert _texts(browser, ".player .delta") == []  # payments are shown only under a result
        # an OBS browser source: the page itself is transparent, only the panels are drawn
        assert browser.execute_script("return [document.documentElement, document.body].map(e => "
                                      "getComputedStyle(e).backgroundColor)") == ["rgba(0, 0, 0, 0)"] * 2

        # ---- a call: the called tile is dimmed in the discarder's pond and turned in the caller's meld
        table.play_until(lambda e: isinstance(e, Call))
        wait_seq(browser, table.seq)
        call = table.record.events[table.index - 1]
        assert _attrs(browser, f".side[data-seat='{call.from_seat}'] .pond .tile.called", "data-tile")[-1] == \
            call.called.mjai
        meld = f".side[data-seat='{call.seat}'] .melds .meld"
        assert sorted(_attrs(browser, f"{meld} .tile", "data-tile")) == sorted(t.mjai for t in call.tiles)
        assert len(_attrs(browser, f"{meld} .tile.turned", "data-tile")) == 1
        state = table.service.table.state
        _panel(browser, names, _hand(state))
        assert _texts(browser, ".centre .wall") == [f"wall {state.hand.wall}"]
        assert _attrs(browser, ".centre .dora .dora-indicator", "data-tile") == [t.mjai for t in state.hand.dora]
        turn = browser.execute_script("return [...document.querySelectorAll('.side.turn')].map(e => e.dataset.seat)")
        assert turn == [str(state.hand.turn)]

        # ---- late in a hand with a riichi (the moment before a ron with ura dora), at both sizes
        ura_ron = _ura_ron_index(table)
        table.play_to(ura_ron)
        wait_seq(browser, table.seq)
        shot(browser, "overlay-1080", backdrop=True)
        viewport(browser, 1280, 720)
        wait_js(browser, "window.innerWidth === 1280")  # the new size laid out
        size = browser.execute_script("const r = document.querySelector('.table-view').getBoundingClientRect();"
                                      "return [r.width, r.height]")
        assert size == [pytest.approx(880 * 2 / 3, abs=1)] * 2  # the same layout at two thirds
        shot(browser, "overlay-720", backdrop=True)
        viewport(browser, 1920, 1080)

        # ---- a ron with ura dora: the result card, by name
        ended = _hand(table.service.table.state)
        table.play_to(ura_ron + 1)
        assert any(n == "Ura Dora" for n, _ in table.service.table.state.results[-1].wins[0].yaku)
        wait_seq(browser, table.seq)
        ron = table.record.events[table.index - 1]
        result = table.service.table.state.results[-1]
        win = result.wins[0]
        wait_js(browser, "document.querySelector('.result-card')")
        assert _texts(browser, ".result-card .winner") == [names[win.seat]]
        assert _texts(browser, ".result-card .payer") == [names[ron.from_seat]]
        assert _texts(browser, ".result-card .yaku .yaku-name") == [n for n, _ in win.yaku]
        assert "Ura Dora" in _texts(browser, ".result-card .yaku .yaku-name")
        assert _texts(browser, ".result-card .han-fu") == [f"{win.han} han {win.fu} fu"]
        if win.limit:
            assert _texts(browser, ".result-card .limit")[0].lower() == win.limit.lower()
        assert _attrs(browser, ".result-card .ura .tile", "data-tile") == [t.mjai for t in ron.ura]
        hand = sorted(_attrs(browser, ".result-card .win-hand .tile", "data-tile"))
        assert hand == sorted(t.mjai for t in ron.claims[0].hand)
        assert _attrs(browser, ".result-card .win-tile", "data-tile") == [
            next(e for e in reversed(table.record.events[:table.index - 1]) if isinstance(e, Discard)).tile.mjai]
        assert _texts(browser, ".result-card .payment .who") == list(names)
        assert _texts(browser, ".result-card .payment .delta") == [_signed(d) for d in result.deltas]
        # the whole picture is the hand that ended: its round, winds, sticks (the winner's to take) and scores
        assert ended["sticks"] >= 1 and result.deltas[win.seat] > win.points  # the sticks go to the winner
        _result_moment(browser, names, ended, result, table.service.table.state)
        assert _texts(browser, ".result-card .card-title")[0].startswith(_texts(browser, ".title .round")[0])
        shot(browser, "overlay-result-1080", backdrop=True)

        # ---- the next deal: everything moves to it at once, the card goes
        table.play_until(lambda e: isinstance(e, HandStart))
        wait_seq(browser, table.seq)
        wait_js(browser, "!document.querySelector('.result-card')", 5, "(the card gone at the next deal)")
        _panel(browser, names, _hand(table.service.table.state))
        assert _texts(browser, ".player .delta") == []
        assert _texts(browser, ".side .pond .tile") == []

        # ---- the last hand: each player's all-last conditions, exactly as the feed carries them in state
        last_hand = max(i for i, e in enumerate(table.record.events) if isinstance(e, HandStart))
        table.play_to(last_hand + 30)
        wait_seq(browser, table.seq)
        conditions = web.store.table("club", "t1").state.get("conditions")
        shown = browser.execute_script("return [...document.querySelectorAll('.conditions .condition')].map(c => "
                                       "[...c.querySelectorAll('li')].map(l => l.textContent))")
        assert conditions and any(conditions)  # seed 17's last hand has all-last conditions
        assert shown == [list(lines) for lines in conditions]
        assert _texts(browser, ".conditions .condition .who") == list(names)
        shot(browser, "overlay-conditions-1080", backdrop=True)

        # ---- the end: the ranking with uma
        table.play_to(len(table.record.events))
        wait_seq(browser, table.seq)
        final = table.service.table.state.final
        wait_js(browser, "document.querySelector('.final-card')")
        rows = browser.execute_script("return [...document.querySelectorAll('.final-card tbody tr')].map(r => "
                                      "[...r.children].map(c => c.textContent))")
        assert [r[1] for r in rows] == [names[s.seat] for s in final.standings]
        assert [r[2] for r in rows] == [f"{s.points:,}" for s in final.standings]
        assert [r[3] for r in rows] == [_signed(s.uma) for s in final.standings]
        # "Game over" stands clear of the seats' plates around it
        boxes = browser.execute_script(
            "const box = (e) => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };"
            "return [box(document.querySelector('.centre .round')), "
            "...[...document.querySelectorAll('.side .plate')].map(box)]")
        text, plates = boxes[0], boxes[1:]
        assert _texts(browser, ".centre .round") == ["Game over"] and len(plates) == 4
        for plate in plates:
            apart = max(plate[0] - text[2], text[0] - plate[2], plate[1] - text[3], text[1] - plate[3])
            assert apart >= 10, (text, plate)  # at least 1rem (10 px at 1080p) between them
        shot(browser, "overlay-final-1080", backdrop=True)

        # ---- the scores-only variant
        browser.get(f"{web.url}/overlay/club/t1?view=scores")
        viewport(browser, 1280, 720)
        wait_seq(browser, table.seq)
        assert _texts(browser, ".score-bar .player .name") == list(names)
        assert not browser.execute_script("return document.querySelector('.table-view')")
        shot(browser, "overlay-scores-720", backdrop=True)
        viewport(browser, 1920, 1080)
    finally:
        table.stop()


def test_conditions_from_the_feed_are_shown(broker, web, browser):
    """All-last conditions are computed by the rules layer and published in ``state.conditions``; the
    overlay shows each player's lines. The retained state is the service's own payload (``state_payload``)
    of a game taken up at South 4 in the situation tests/test_conditions.py works out by hand, checked
    against the state schema before it is published."""
    engine = Engine()
    engine.apply(GameStart(players=("Ann", "Bob", "Cid", "Dan"), rules="ema2012", round="S4",
                           scores=(32000, 28000, 31000, 29000), dealer=3))
    state = state_payload(engine.state, 900, ts=time.time())
    assert validate("state", state) == []
    # tests/test_conditions.py::test_non_dealer_places_by_tsumo_ron_and_draw, worked out by hand
    bob = ["1st with 900/1800 tsumo, 3200 from Ann or 4500 from Cid or Dan",
           "2nd with 700/1300 tsumo, 2300 from Ann, 1600 from Cid, 3200 from Dan or tenpai alone at a draw",
           "3rd with 300/500 tsumo, 1300 from Ann or Cid, 1000 from Dan or tenpai at a draw"]
    cid = ["1st with 300/500 tsumo, 1000 from Ann, 1300 from Bob or Dan or tenpai at a draw with Ann noten"]
    assert state["conditions"] == [[], bob, cid, ["a win or tenpai keeps the deal"]]
    client = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2)
    client.connect("127.0.0.1", broker.port)
    client.loop_start()
    client.publish("tablesvc/club/t9/state", json.dumps(state), qos=1, retain=True).wait_for_publish(5)
    client.loop_stop()
    client.disconnect()
    browser.get(f"{web.url}/overlay/club/t9")
    wait_seq(browser, 900)
    wait_js(browser, "document.querySelector('.conditions')")
    for seat, lines in enumerate(state["conditions"]):
        assert _texts(browser, f".conditions .condition[data-seat='{seat}'] li") == lines
    assert _texts(browser, ".conditions .condition .who") == ["Ann", "Bob", "Cid", "Dan"]
    assert _texts(browser, ".title .round") == ["South 4"]


def test_a_page_cut_mid_hand_resumes_without_missing_a_result(broker, web, browser, tmp_path):
    table = LiveTable(broker.url, tmp_path / "data", table="t2").start()
    proxy = CuttableProxy(web.port)
    try:
        table.play_to(100)  # mid-hand
        browser.get(f"http://127.0.0.1:{proxy.port}/overlay/club/t2")
        wait_seq(browser, table.seq)
        assert browser.execute_script("return document.body.dataset.snapshots") == "1"
        proxy.cut()  # the stream dies; the game goes on through two hand ends
        wait_js(browser, "document.body.dataset.connected === 'no'")
        before = len(table.service.table.state.results)
        for _ in range(2):
            table.play_until(lambda e: isinstance(e, Ron | Tsumo | ExhaustiveDraw))
        table.play_to(table.index + 20)  # into the next hand
        assert len(table.service.table.state.results) == before + 2
        proxy.restore()
        wait_seq(browser, table.seq, timeout=20)
        results = int(browser.execute_script("return document.body.dataset.results"))
        assert results == len(table.service.table.state.results)
        # it resumed: the server sent what was missed after Last-Event-ID, not a new snapshot
        assert browser.execute_script("return document.body.dataset.snapshots") == "1"
        assert browser.execute_script("return window.tablesvcFeed.source.readyState") == 1
    finally:
        proxy.close()
        table.stop()
