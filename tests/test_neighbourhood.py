import pytest

from optnoise import InputPairs, InvalidParameterError, Neighbourhood
from optnoise.cli.inputs import neighbourhood as neighbourhood_from_flags
from optnoise.cli.options import NeighbourhoodArgs
from optnoise.neighbourhood import parse_distances


def test_symmetric_cyclic_shifts_are_closed_under_negation_mod_n_plus_1():
    nb = Neighbourhood.bd(3)
    assert nb.cyclic_shifts(9) == [(1,), (8,), (2,), (7,), (3,), (6,)]
    directed = Neighbourhood.bd(3, directed=True)
    assert directed.cyclic_shifts(9) == [(1,), (2,), (3,)]


def test_self_inverse_shift_is_not_duplicated():
    # on {0..3}, -2 = 2 mod 4
    assert Neighbourhood.sd(2).cyclic_shifts(4) == [(2,)]


def test_integer_shifts():
    assert Neighbourhood.bd(2).integer_shifts() == [-2, -1, 1, 2]
    assert Neighbourhood.sd(3, directed=True).integer_shifts() == [3]


def test_vector_shifts():
    nb = Neighbourhood(((1, 0), (0, 1)))
    assert nb.cyclic_shifts((3, 4)) == [(1, 0), (2, 0), (0, 1), (0, 3)]
    with pytest.raises(InvalidParameterError, match="1-dimensional distances for a domain of shape"):
        nb.cyclic_shifts(5)


@pytest.mark.parametrize("distances", [(0,), (9,), (-9,)])
def test_distances_outside_domain_rejected(distances):
    with pytest.raises(InvalidParameterError) as info:
        Neighbourhood(distances).cyclic_shifts(9)
    assert info.value.parameter == "distances"


def test_mixed_distance_kinds_rejected():
    with pytest.raises(InvalidParameterError):
        Neighbourhood((1, (1, 0)))


def test_parse_distances():
    assert parse_distances("1,2,3") == (1, 2, 3)
    assert parse_distances("1..3,5") == (1, 2, 3, 5)
    assert parse_distances("1,0;0,1") == ((1, 0), (0, 1))
    with pytest.raises(InvalidParameterError, match="invalid distances"):  # the Python parameter; the CLI says --distances
        parse_distances("a,b")


def test_options_are_exclusive():
    with pytest.raises(InvalidParameterError, match="exactly one"):
        neighbourhood_from_flags(NeighbourhoodArgs("1", 1, None, False))
    assert neighbourhood_from_flags(NeighbourhoodArgs(None, None, 3, True)) == Neighbourhood.bd(3, directed=True)
    assert neighbourhood_from_flags(NeighbourhoodArgs(None, None, None, False)).distances == (1,)


def test_input_pairs_from_distances_do_not_wrap():
    pairs = InputPairs.from_distances(Neighbourhood.sd(1), 3)
    assert sorted(pairs.ordered(3)) == [(0, 1), (1, 0), (1, 2), (2, 1)]


def test_input_pairs_validation():
    with pytest.raises(InvalidParameterError, match="distinct"):
        InputPairs(((1, 1),))
    with pytest.raises(InvalidParameterError, match="input indices"):
        InputPairs(((0, 5),)).ordered(3)
