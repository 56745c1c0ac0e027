"""Statistics of a table with optimal, certified noise, per person, under one budget (docs/statistics.md)."""
