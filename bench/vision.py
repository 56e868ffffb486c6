"""Vision bench: accuracy, frame time and the full camera loop. `python bench/vision.py [--tiles N] [--games N]`

(a) per-tile top-1 / wrong / unknown rates over --tiles face-up tiles in rendered 1920x1080 frames
    (random ponds with riichi tiles, melds, revealed hands, dora; red fives included; noise, blur,
    JPEG, light gradient, glare, jittered tiles; overhead and 35-degree oblique cameras alternate),
    for the project's drawn tiles and for FluffyStuff;
(b) ms per frame of FramePipeline.process on one core: cold (every tile new, all classified) from (a),
    steady (frames of a game where most slots hit the classification cache) from (c);
(c) --games generated games played TableSimulator -> CameraFeed (render -> vision -> tracker) -> Fusion
    -> Engine: share of hands whose deltas equal the record, and the first divergence;
(d) real photos (tiles-photos-camerash): top-1 enrolled from drawn art and from one photo per kind,
    flowers/seasons unknown rate (bench/classifier_compare.py's data and scoring);
(e) our figures beside the PyPI mahjong-detector's (about 100 ms per image, under a fifth of the tiles
    found in a real photo of an automatic table: figures reported for it, not measured here);
(f) (g) (h) the learnt embedding beside the LDA on real photos and an unseen colouring (bench/vision_real.py):
    a set enrolled from <= 3 real images per kind, a dark-faced / recoloured FluffyStuff enrolled from its
    artwork read in four orientations at 64 and 40 px, real photos enrolled from artwork only.
``--classifier embedding`` runs (a) (b) (c) with the embedding instead of the LDA; ``--real-quick``
(and ``--quick``) bounds (f) (g) (h) to a hundred-odd crops each and enrolls (f) from one real image per kind
(the test runs it).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import multiprocessing
import statistics
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hardware_sims.camera_feed import CameraFeed, observation_key
from hardware_sims.camera_render import (
    CameraPose,
    Discard,
    Effects,
    MeldView,
    SeatView,
    TableView,
    render,
)
from hardware_sims.generator import GeneratorOptions, generate_game
from hardware_sims.table import TableSimulator
from hardware_sims.tile_art import TileSet, drawn_tile_set, load_tile_set
from tablesvc.engine.engine import Engine, Rejected, apply
from tablesvc.engine.results import HandResult
from tablesvc.service.fusion import Fusion
from vision.naming.classifier import TILES, TileClassifier
from vision.naming.embedding import EmbeddingClassifier
from vision.table.calibration import calibrate
from vision.table.pipeline import FramePipeline

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
FLUFFY = DATA / "tiles-fluffystuff"
PHOTOS = DATA / "tiles-photos-camerash"

MAHJONG_DETECTOR_MS = 100.0  # per image, as reported for mahjong-detector (not measured here)
MAHJONG_DETECTOR_FOUND = 0.20  # "under a fifth of the tiles", as reported for it (not measured here)

BENCH_EFFECTS = Effects(gradient=0.3, glare=60.0, noise_sigma=5.0, blur_sigma=0.9, jpeg_quality=80,
                        jitter_mm=1.5, jitter_deg=3.0)  # fmt: skip
LOOP_EFFECTS = Effects(gradient=0.2, noise_sigma=3.0, blur_sigma=0.6, jpeg_quality=90)


def pct(a: float, b: float) -> str:
    return f"{100 * a / b:.2f} %" if b else "-"


def pctl(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(len(s) * q))] if s else float("nan")


# ---------------------------------------------------------------------------- (a) accuracy
def random_view(rng: np.random.Generator) -> TableView:
    """A busy table: ponds of 8..18 tiles with a riichi tile, one or two melds, a hand or not, dora."""
    def pick() -> str:
        return TILES[int(rng.integers(len(TILES)))]

    seats = []
    for _ in range(4):
        n = int(rng.integers(8, 19))
        riichi = int(rng.integers(-4, n))  # negative: no riichi in this pond
        pond = tuple(Discard(pick(), sideways=(i == riichi)) for i in range(n))
        melds = []
        for _ in range(int(rng.integers(0, 3))):
            t = pick()
            if rng.random() < 0.5:
                melds.append(MeldView((t, t, t), called=int(rng.integers(3)),
                                      added=t if rng.random() < 0.3 else None))  # fmt: skip
            else:
                melds.append(MeldView((pick(), pick(), pick()), called=int(rng.integers(3))))
        hand = tuple(pick() for _ in range(14 - 3 * len(melds))) if rng.random() < 0.4 else ()
        seats.append(SeatView(pond, tuple(melds), hand))
    dora = tuple(pick() for _ in range(int(rng.integers(1, 4))))
    return TableView(tuple(seats), dora=dora)  # type: ignore[arg-type]


@dataclass
class Accuracy:
    tiles: int = 0
    correct: int = 0
    wrong: int = 0
    unknown: int = 0
    missed: int = 0  # not detected at all
    red_tiles: int = 0
    red_correct: int = 0
    frames: int = 0
    ms: list[float] = field(default_factory=list)
    confusions: dict[tuple[str, str], int] = field(default_factory=dict)


def accuracy(tiles: TileSet, classifier: TileClassifier, n_tiles: int, seed: int) -> Accuracy:
    rng = np.random.default_rng(seed)
    cameras = [CameraPose.overhead(), CameraPose.oblique(35.0)]
    pipes: dict[int, FramePipeline] = {}
    acc = Accuracy()
    while acc.tiles < n_tiles:
        cam_i = acc.frames % len(cameras)
        frame, truth = render(random_view(rng), camera=cameras[cam_i], tiles=tiles, effects=BENCH_EFFECTS, rng=rng)
        if cam_i not in pipes:
            pipes[cam_i] = FramePipeline(calibrate(frame), None, classifier, confirm_frames=1)  # one frame alone
        pipes[cam_i].reset_cache()  # every frame is a new table: measure classification, not the cache
        readings = pipes[cam_i].process(frame)
        acc.frames += 1
        acc.ms.append(readings.ms)
        got = {(d.zone, d.seat, d.index): d for d in readings.tiles}
        for t in truth.tiles:
            if not t.face_up:
                continue
            acc.tiles += 1
            red = t.tile.endswith("r")
            acc.red_tiles += red
            d = got.get((t.zone, t.seat, t.index))
            if d is None or not d.face_up:
                acc.missed += 1
            elif d.tile is None:
                acc.unknown += 1
            elif d.tile == t.tile:
                acc.correct += 1
                acc.red_correct += red
            else:
                acc.wrong += 1
                key = (t.tile, d.tile)
                acc.confusions[key] = acc.confusions.get(key, 0) + 1
    return acc


# ---------------------------------------------------------------------------- (c) full loop
@dataclass
class LoopResult:
    hands: int = 0
    exact_hands: int = 0
    games: int = 0
    changes: int = 0
    exact_changes: int = 0
    frames: int = 0
    pipeline_ms: list[float] = field(default_factory=list)
    read_ms: list[float] = field(default_factory=list)
    render_ms: list[float] = field(default_factory=list)
    rejected: int = 0
    divergences: list[str] = field(default_factory=list)
    seconds: float = 0.0
    finder_calls: int = 0  # frames where the tile finder looked for a pond tile pushed off its slot

    def merge(self, other: LoopResult) -> None:
        for f in ("hands", "exact_hands", "games", "changes", "exact_changes", "frames", "rejected", "seconds",
                  "finder_calls"):
            setattr(self, f, getattr(self, f) + getattr(other, f))
        for f in ("pipeline_ms", "read_ms", "render_ms", "divergences"):
            getattr(self, f).extend(getattr(other, f))


_WORKER: dict[str, tuple[TileSet, TileClassifier]] = {}  # set name -> (tiles, enrolled classifier), per process


LOOP_HANDS: int | None = None  # --quick: the loop plays only the first hands of each game
LOOP_CHANGES: int | None = None  # --quick: and stops after this many table changes


def _play_one(seed: int, name: str, occlude_every: int, effects: Effects = LOOP_EFFECTS) -> LoopResult:
    cv2.setNumThreads(1)
    tiles, classifier = _WORKER[name]
    res = LoopResult()
    play(seed, tiles, classifier, res, occlude_every, effects)
    return res


def loop_effects(jitter_mm: float) -> Effects:
    """The loop's camera effects; ``jitter_mm`` > 0: tiles put down up to that far (and twice as many
    degrees) off their slots, each lying still for the hand (the feed fixes the placement per hand)."""
    return replace(LOOP_EFFECTS, jitter_mm=jitter_mm, jitter_deg=2 * jitter_mm) if jitter_mm else LOOP_EFFECTS


def play(seed: int, tiles: TileSet, classifier: TileClassifier, res: LoopResult, occlude_every: int,
         effects: Effects = LOOP_EFFECTS) -> None:  # fmt: skip
    game = generate_game(seed, GeneratorOptions(max_hands=LOOP_HANDS) if LOOP_HANDS else None)
    engine = Engine()
    results: list[HandResult] = []
    rejected: list[str] = []

    def would_accept(event: object) -> bool:
        try:
            apply(engine.state, event)  # type: ignore[arg-type]
        except Rejected:
            return False
        return True

    fusion = Fusion(lambda: engine.state, would_accept)
    sim = TableSimulator(game, None, start_game=engine.apply)  # type: ignore[arg-type]

    def deliver(observation: object) -> None:
        if LOOP_CHANGES is not None and len(feed.stats.changes) >= LOOP_CHANGES:
            sim.stop()  # --quick: enough changes seen to know the loop works
        for action in fusion.observe(observation):  # type: ignore[arg-type]
            try:
                out = engine.apply(action.event)  # type: ignore[arg-type]
            except Rejected as exc:
                rejected.append(f"{action.event!r}: {exc}")
                sim.stop()  # the game has left the record: the rest would measure nothing
                continue
            ended = [o for o in out if isinstance(o, HandResult)]
            if ended:
                fusion.hand_ended()
            results.extend(ended)

    t0 = time.perf_counter()
    feed = CameraFeed(deliver, classifier, tiles=tiles, effects=effects, occlude_every=occlude_every, seed=seed)
    sim.out = feed
    sim.run()
    res.seconds += time.perf_counter() - t0
    want = [h.deltas for h in game.hands if h.deltas is not None]
    got = [r.deltas for r in results]
    if LOOP_CHANGES is not None:
        want = want[: len(got)]  # --quick: the hands the loop was stopped in are not counted
    res.games += 1
    res.hands += len(want)
    # hand k is exact when every result up to and including it matches (a missed hand shifts the rest)
    for k in range(len(want)):
        if got[: k + 1] == want[: k + 1]:
            res.exact_hands += 1
    st = feed.stats
    res.changes += len(st.changes)
    res.exact_changes += sum(c.exact for c in st.changes)
    res.frames += st.frames
    res.pipeline_ms += st.pipeline_ms
    res.read_ms += st.read_ms
    res.render_ms += st.render_ms
    res.rejected += len(rejected)
    res.finder_calls += feed.pipeline.finder_calls
    div = st.first_divergence
    if div is not None:
        src = observation_key(div.source) if div.source else "table cleared"
        got_keys = [observation_key(o) for o in div.emitted]
        res.divergences.append(f"game {seed}: change #{st.changes.index(div) + 1} expected {src}, tracker gave "
                               f"{got_keys or 'nothing'} in {div.frames} frames; first engine rejection: "
                               f"{rejected[0] if rejected else 'none'}")


# ---------------------------------------------------------------------------- (d) real photos
def photos() -> list[str]:
    from bench.classifier_compare import evaluate, photo_images, photo_split

    drawn = TileClassifier()
    drawn.enroll(drawn_tile_set().faces)
    every = list(photo_images())
    r1 = evaluate(drawn.scores, (drawn.min_similarity, drawn.min_margin), every)
    enroll, test = photo_split()
    one = TileClassifier()
    one.enroll(enroll)
    r2 = evaluate(one.scores, (one.min_similarity, one.min_margin), test)
    lines = []
    for label, r in (("enrolled from drawn art", r1), ("enrolled from 1 photo per kind", r2)):
        lines.append(f"  {label:<32} {r.known} riichi photos: top-1 {pct(r.correct, r.known)}, wrong "
                     f"{pct(r.wrong, r.known)}, unknown {pct(r.unknown, r.known)}; flowers/seasons unknown "
                     f"{pct(r.others_rejected, r.others)} of {r.others}")
    return lines


# ---------------------------------------------------------------------------- main
def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tiles", type=int, default=10000, help="face-up tiles per tile set for (a) (issue: >= 10,000)")
    ap.add_argument("--games", type=int, default=2, help="generated games for the full loop (issue: 20)")
    ap.add_argument("--loop-sets", default="drawn", help="tile sets for the loop: drawn, fluffy or drawn,fluffy")
    ap.add_argument("--occlude-every", type=int, default=7, help="a hand over the table in every k-th change")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=1, help="processes for the loop's games (each on one core)")
    ap.add_argument("--seeds", default="", help="the loop's game seeds, e.g. '110,114' (default: 100 .. 99+games)")
    ap.add_argument("--skip", default="", help="parts to skip, e.g. 'photos,loop'")
    ap.add_argument("--classifier", choices=("lda", "embedding"), default="lda",
                    help="what reads the rendered frames of (a) (b) (c) (default: %(default)s)")
    ap.add_argument("--real-quick", action="store_true",
                    help="(f) (g) (h) on a hundred-odd crops each only, (f) enrolled from 1 image per kind")
    ap.add_argument("--real-methods", default="embedding,lda", help="what (f) (g) (h) compare (default: %(default)s)")
    ap.add_argument("--loop-jitter", type=float, default=0.0, metavar="MM",
                    help="the loop's tiles put down up to MM mm / 2*MM degrees off their slots, still for the hand")
    ap.add_argument("--quick", action="store_true",
                    help="drawn tiles only, 30 tiles, a one-hand loop, 12 enrollment copies (what the tests run)")
    args = ap.parse_args()
    global LOOP_HANDS, LOOP_CHANGES
    if args.quick:
        args.tiles, args.games, args.seeds, args.loop_sets = 30, 1, "", "drawn"
        # the real-pixel sections have a quick mode of their own (--real-quick, run by tests/test_bench_vision.py)
        args.skip = ",".join(filter(None, [args.skip, "photos", "real", "colouring", "artwork"]))
        LOOP_HANDS, LOOP_CHANGES = 1, 24
    cv2.setNumThreads(1)
    skip = set(args.skip.split(",")) - {""}
    print(f"options: --tiles {args.tiles} --games {args.games} --jobs {args.jobs} --loop-sets {args.loop_sets} "
          f"--occlude-every {args.occlude_every} --seed {args.seed} --skip {args.skip or '-'} "
          f"--loop-jitter {args.loop_jitter} --classifier {args.classifier}{' --quick' if args.quick else ''}; "
          f"cv2 threads {cv2.getNumThreads()}, OpenCV {cv2.__version__}")

    sets: dict[str, TileSet] = {"drawn": drawn_tile_set()}
    if FLUFFY.is_dir() and not args.quick:
        sets["fluffy"] = load_tile_set(FLUFFY)
    classifiers: dict[str, TileClassifier] = {}
    for name, ts in sets.items():
        t0 = time.perf_counter()
        clf = (EmbeddingClassifier() if args.classifier == "embedding"
               else TileClassifier(augment_per_image=12) if args.quick else TileClassifier())
        clf.enroll(ts.faces)
        classifiers[name] = clf
        _WORKER[name] = (ts, clf)
        print(f"enrolled {name} ({args.classifier}): {len(ts.faces)} faces, {clf.augment_per_image} augmented "
              "copies each, "
              f"{time.perf_counter() - t0:.1f} s")

    cold_ms: list[float] = []
    accs: dict[str, Accuracy] = {}
    if "accuracy" not in skip:
        print(f"\n(a) per-tile accuracy in rendered 1920x1080 frames (overhead and 35-degree oblique alternate; "
              f"effects {BENCH_EFFECTS})")
        for name, ts in sets.items():
            t0 = time.perf_counter()
            a = accuracy(ts, classifiers[name], args.tiles, args.seed)
            accs[name] = a
            cold_ms += a.ms
            conf = ", ".join(f"{t}->{g} x{n}" for (t, g), n in
                             sorted(a.confusions.items(), key=lambda kv: -kv[1])[:6]) or "none"
            print(f"  {name:<7} {a.tiles} tiles in {a.frames} frames ({time.perf_counter() - t0:.0f} s): "
                  f"top-1 {pct(a.correct, a.tiles)}, wrong {pct(a.wrong, a.tiles)}, unknown "
                  f"{pct(a.unknown, a.tiles)}, not detected {pct(a.missed, a.tiles)}; red fives "
                  f"{pct(a.red_correct, a.red_tiles)} of {a.red_tiles}; worst confusions: {conf}")
        if args.tiles < 10000:
            print(f"  (ran {args.tiles} tiles per set; a full run reads >= 10,000: --tiles 10000)")

    loops: dict[str, LoopResult] = {}
    if "loop" not in skip:
        effects = loop_effects(args.loop_jitter)
        print(f"\n(c) full loop: {args.games} generated game(s) TableSimulator -> CameraFeed (render -> "
              f"FramePipeline -> ZoneTracker) -> Fusion -> Engine; effects {effects}; "
              f"hand over the table every {args.occlude_every} changes")
        for name in args.loop_sets.split(","):
            seeds = [int(x) for x in args.seeds.split(",")] if args.seeds else [100 + g for g in range(args.games)]
            if args.jobs > 1:  # games are independent: one process per core, each on one core
                with multiprocessing.get_context("fork").Pool(args.jobs) as pool:
                    parts = pool.starmap(_play_one, [(s, name, args.occlude_every, effects) for s in seeds],
                                         chunksize=1)
            else:
                parts = [_play_one(s, name, args.occlude_every, effects) for s in seeds]
            res = LoopResult()
            for part in parts:
                res.merge(part)
            loops[name] = res
            print(f"  {name:<7} hands exact {res.exact_hands}/{res.hands} ({pct(res.exact_hands, res.hands)}); "
                  f"table changes read exactly {res.exact_changes}/{res.changes}; {res.frames} frames, "
                  f"{res.rejected} events the engine refused; {res.seconds:.0f} s of play "
                  f"(render median {statistics.median(res.render_ms):.0f} ms/frame); the tile finder ran on "
                  f"{res.finder_calls} frames (a pond tile off its slot)")
            if LOOP_CHANGES is not None:
                print(f"  (--quick: each game stopped after {LOOP_CHANGES} table changes)")
            for d in res.divergences:
                print(f"    first divergence, {d}")

    print("\n(b) FramePipeline.process, 1920x1080, one core")
    if cold_ms:
        print(f"  cold (every tile classified, ~{np.mean([a.tiles / a.frames for a in accs.values()]):.0f} "
              f"face-up tiles/frame): median {statistics.median(cold_ms):.1f} ms, p95 {pctl(cold_ms, 0.95):.1f} ms "
              f"over {len(cold_ms)} frames")
    steady = [m for r in loops.values() for m in r.pipeline_ms]
    read = [m for r in loops.values() for m in r.read_ms]
    if steady:
        print(f"  in play (every frame the game loop rendered: 3-10 after each change, lighting fixed per game, "
              f"fresh noise): median {statistics.median(steady):.1f} ms, p95 {pctl(steady, 0.95):.1f} ms over "
              f"{len(steady)} frames (target median < 20 ms)")
    if read:
        print(f"    of which read in full ({len(read)} frames, {100 * len(read) / len(steady):.0f} %; the others "
              f"repeated by the motion gate): median {statistics.median(read):.1f} ms, p95 {pctl(read, 0.95):.1f} ms")

    if "photos" not in skip and PHOTOS.is_dir():
        print("\n(d) real photos, tiles-photos-camerash")
        for line in photos():
            print(line)

    methods = [m for m in args.real_methods.split(",") if m]
    if "real" not in skip:
        from bench.vision_real import real_enrolled

        print("\n(f) real photos, a set enrolled from <= 3 real images per kind, the rest read (embedding beside LDA)")
        quick = args.quick or args.real_quick  # one image per kind: a third of the network passes of enrolling
        for line in real_enrolled(methods, per_kind=1 if quick else 3, limit=120 if quick else 0):
            print(line, flush=True)
    if "colouring" not in skip and "fluffy" in sets:
        from bench.vision_real import unseen_colouring

        print("\n(g) a colouring never seen in training (FluffyStuff recoloured), enrolled from that artwork only")
        per_kind = 4 if args.quick or args.real_quick else 40
        for line in unseen_colouring(methods, sets["fluffy"].faces, per_kind=per_kind):
            print(line, flush=True)
    if "artwork" not in skip:
        from bench.vision_real import artwork_enrolled

        art = {name: ts.faces for name, ts in sets.items()}
        # (a)'s classifiers where (h) would enroll the same artwork the same way (METHODS: the defaults)
        same = args.classifier == "embedding" or not args.quick
        enrolled = {(name, args.classifier): clf for name, clf in classifiers.items()} if same else {}
        print("\n(h) real photos of sets never enrolled, enrolled from artwork of a similar design")
        for line in artwork_enrolled(methods, art, limit=120 if args.quick or args.real_quick else 0,
                                     enrolled=enrolled):
            print(line, flush=True)

    print("\n(e) beside the PyPI mahjong-detector (reported figures, not measured here: ~100 ms/image, "
          "< 20 % of tiles found on a real automatic-table photo)")
    for name, a in accs.items():
        found = (a.tiles - a.missed) / a.tiles if a.tiles else float("nan")
        print(f"  ours, {name:<7} median {statistics.median(a.ms):.1f} ms/frame cold vs ~{MAHJONG_DETECTOR_MS:.0f} ms;"
              f" tiles detected {100 * found:.1f} %, named right {pct(a.correct, a.tiles)} vs "
              f"< {100 * MAHJONG_DETECTOR_FOUND:.0f} % found (rendered frames, not a real table photo)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
