"""Issue 25, item 5: the default samplers of the release path do the same work (random words,
rounds) for every value drawn -- counted with an instrumented source, not timed."""

import numpy as np
import pytest
from scipy import stats

import optnoise
from optnoise import Channel, CyclicPMF
from optnoise.randomness import SeededRandomSource
from optnoise.sampling import integer_line as z
from optnoise.sampling.fixed_work import (draw_window_tails_fixed, fixed_tails, geometric_from_words,
                                          geometric_table)
from optnoise.sampling.work import CountingSource, work_by_value

DRAWS = 3000


def heavy_tails():
    """A window with heavy tails (so that many single draws land in them) whose alias table has
    no padding to redraw at any practical rate (the padding cell weighs less than 2^-40)."""
    wt = z.window_tails_table(np.array([1, 2, 3, 2, 1]), -2, left=z.Tail(1, 1, 1), right=z.Tail(3, 2, 2))
    assert wt.reject is None or (1 << 62) - (1 << 62) // sum(wt.cells) * sum(wt.cells) < 2 ** 22
    return wt


def test_window_and_tails_take_two_words_for_every_value():
    wt = heavy_tails()
    ft = fixed_tails(wt)
    work = work_by_value(lambda s: draw_window_tails_fixed(ft, 1, s)[0], DRAWS, SeededRandomSource(3))
    values = list(work.by_value)
    assert min(values) < wt.lo - 3 and max(values) > wt.hi + 3      # deep in both tails, and the window
    assert work.fixed and work.words == (2, 2) and work.calls == 1
    # power: the loop sampler on the same table takes more words in the tails than in the window
    loop = work_by_value(lambda s: z.draw_window_tails(wt, 1, s)[0], DRAWS, SeededRandomSource(3))
    assert not loop.fixed
    inside = [v[3] for x, v in loop.by_value.items() if wt.lo <= x <= wt.hi]
    outside = [v[3] for x, v in loop.by_value.items() if not wt.lo <= x <= wt.hi]
    assert max(inside) < min(outside)


@pytest.mark.parametrize("support", [5, 24])
def test_cyclic_noise_takes_one_word_for_every_value(support):
    rng = np.random.default_rng(support)
    q = optnoise.additive(CyclicPMF(rng.dirichlet(np.ones(support)))).quantize()
    assert q.sampler == ("cdf" if support < 16 else "alias")
    work = work_by_value(lambda s: q.draw(1, s)[0], DRAWS, SeededRandomSource(4))
    assert len(work.by_value) >= support - 1 and work.fixed and work.words == (1, 1) and work.calls == 1


def test_channel_rows_take_one_word_whatever_the_input_and_output():
    rng = np.random.default_rng(9)
    q = optnoise.channel(Channel(rng.dirichlet(np.ones(6), size=6))).quantize()
    inputs = iter(np.random.default_rng(1).integers(0, 6, DRAWS))

    def one(source):
        x = int(next(inputs))
        return 10 * x + int(q.draw_outputs(np.array([x]), source)[0])   # the value: (input, output)

    work = work_by_value(one, DRAWS, SeededRandomSource(5))
    assert len(work.by_value) == 36 and work.fixed and work.words == (1, 1) and work.calls == 1
    # a batch of mixed inputs takes one word per draw and one call per chunk, whatever the inputs
    counter = CountingSource(SeededRandomSource(6))
    q.draw_outputs(np.array([5, 0, 0, 3, 5, 1, 2]), counter)
    assert (counter.words_drawn, counter.calls) == (7, 1)
    counter = CountingSource(SeededRandomSource(6))
    q.draw_outputs(np.full(7, 4), counter)
    assert (counter.words_drawn, counter.calls) == (7, 1)


@pytest.mark.slow
def test_default_integer_mechanism_samples_with_value_independent_work():
    """A quantized mechanism's alias table is padded to 2^62 by a cell that is redrawn (one
    word per redraw) with a probability that does not depend on the value (2.8 % here): every
    draw takes two words in its first round and one per redraw, and the redraws are as frequent
    for small values as for large ones (chi-square independence test, false-alarm rate 1e-3)."""
    g = optnoise.geometric(epsilon=0.3)
    counter = CountingSource(SeededRandomSource(7))
    rows = []
    for _ in range(4 * DRAWS):
        w0, c0 = counter.words_drawn, counter.calls
        value = int(g.sample(1, source=counter)[0])
        rows.append((value, counter.words_drawn - w0, counter.calls - c0))
    v, words, calls = map(np.array, zip(*rows))
    assert np.all(words == calls + 1)                       # 2 words, then 1 per redraw round
    redrawn = calls > 1
    assert 0.01 < redrawn.mean() < 0.06
    big = np.abs(v) > np.median(np.abs(v))
    table = [[np.sum(redrawn & big), np.sum(~redrawn & big)], [np.sum(redrawn & ~big), np.sum(~redrawn & ~big)]]
    assert stats.chi2_contingency(table).pvalue > 1e-3


def test_geometric_from_one_word_is_exact():
    """The block count read from one word is the geometric law exactly: by hand at the
    thresholds (and just beside them), and by a chi-square test with a power check."""
    a, m = 3, 2                              # r = 3/4
    table = geometric_table(a, m)
    s = [(3 ** g << 64) >> (2 * g) for g in range(1, 6)]
    u = np.array([0, s[0] - 1, s[0], s[0] + 1, s[2] - 1, s[2], (1 << 64) - 1], dtype=np.uint64)
    counter = CountingSource(SeededRandomSource(2))
    got = geometric_from_words(table, u, counter)
    # 2^64 (3/4)^g is an integer for g <= 32: u = S_g decides (U >= r^g); u = 0 is undecided (U tiny)
    assert got[1:].tolist() == [1, 0, 0, 3, 2, 0] and got[0] >= 150 and counter.words_drawn >= 1
    for a2, m2 in ((3, 2), (12428869, 24), (15, 4)):          # = the count of thresholds above each word
        t2 = geometric_table(a2, m2)
        words = SeededRandomSource(a2).words(3000)
        thresholds = [(a2 ** g << 64) >> (m2 * g) for g in range(1, t2.size + 1)]
        want = [sum(1 for x in thresholds if x > int(w)) for w in words]
        assert geometric_from_words(t2, words, SeededRandomSource(1)).tolist() == want
    draws = geometric_from_words(table, SeededRandomSource(8).words(200_000), SeededRandomSource(9))
    top = 12
    obs = np.bincount(np.minimum(draws, top), minlength=top + 1)
    law = np.array([0.25 * 0.75 ** g for g in range(top)] + [0.75 ** top])
    assert stats.chisquare(obs, law * draws.size).pvalue > 1e-3
    wrong = np.array([0.27 * 0.73 ** g for g in range(top)] + [0.73 ** top])
    assert stats.chisquare(obs, wrong * draws.size).pvalue < 1e-3


def test_geometric_table_is_its_definition():
    """``S_g = floor(2^64 r^g)`` and the integrality flags, computed from scratch per ``g``,
    equal the table; the refusal is exactly "more than MAX_THRESHOLDS entries" (ratios on both
    sides of the boundary, r >= 1 refused)."""
    from optnoise.sampling.fixed_work import MAX_THRESHOLDS

    def naive_size(a: int, m: int) -> int:      # largest g with 2^64 a^g >= 2^(m g), capped
        g, power = 0, a
        while g <= MAX_THRESHOLDS and (power << 64) >> (m * (g + 1)) >= 1:
            g, power = g + 1, power * a
        return g

    for a, m in ((3, 2), (1, 1), (4, 3), (12, 4), (1 << 20, 22), (12428869, 24), ((1 << 62) - 3, 62),
                 (2162748110057303, 51), (0, 5), (5, 2), (4, 2), (16773723, 24)):
        t, size = geometric_table(a, m), naive_size(a, m)
        assert (t is None) == (size > MAX_THRESHOLDS or a >= 1 << m), (a, m)
        if t is not None:
            s = [(a ** g << 64) >> (m * g) for g in range(1, size + 1)]
            flags = [((a ** g << 64) & ((1 << (m * g)) - 1)) == 0 for g in range(1, size + 1)]
            assert t.thresholds.tolist() == [(1 << 64) - 1] + s + [0]
            assert t.integral.tolist() == [True] + flags + [False]


def test_fixed_window_tails_draw_the_certified_law():
    """Chi-square (false-alarm rate 1e-3) of the fixed-work sampler against the exact law of the
    table's cells and geometric blocks, with a power check."""
    wt = heavy_tails()
    x = draw_window_tails_fixed(fixed_tails(wt), 400_000, SeededRandomSource(11))
    from test_integer_line import sampled_law
    span = list(range(-30, 31))
    law = sampled_law(wt, span)
    p = np.array([float(law[v]) for v in span])
    obs = np.array([(x == v).sum() for v in span] + [((x < -30) | (x > 30)).sum()])
    exp = np.append(p, 1 - p.sum()) * x.size
    keep = exp >= 5
    obs, exp = np.append(obs[keep], obs[~keep].sum()), np.append(exp[keep], exp[~keep].sum())
    assert stats.chisquare(obs, exp).pvalue > 1e-3
    wrong = exp.copy()
    top = int(np.argmax(exp))                 # 2 % of the most likely value moved to its neighbour
    wrong[top], wrong[top + 1] = wrong[top] * 0.98, wrong[top + 1] + wrong[top] * 0.02
    assert stats.chisquare(obs, wrong).pvalue < 1e-3
