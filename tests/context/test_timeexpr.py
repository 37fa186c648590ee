"""Relative time expressions: every phrase in both languages against fixed clocks, the rules that keep code and
habits out, the block text, and calendar invariants for arbitrary clocks."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mini_agent.context.blocks import P1, ContextBlock, Skip, TurnInput
from mini_agent.context.enrich.timeexpr import TimeMatch, describe, resolve, time_expressions

UTC8 = timezone(timedelta(hours=8))
UTC_5 = timezone(timedelta(hours=-5))
SUN = datetime(2026, 11, 22, 14, 5, tzinfo=UTC8)  # a Sunday: its week is Mon 16 - Sun 22 November
WED = datetime(2026, 1, 28, 9, 30, tzinfo=UTC_5)  # a Wednesday: its week is Mon 26 January - Sun 1 February
MON = datetime(2026, 11, 23, 8, 0, tzinfo=UTC8)
MONTH_END = datetime(2026, 1, 31, 22, 45, tzinfo=UTC_5)  # a Saturday
YEAR_END = datetime(2026, 12, 31, 23, 50, tzinfo=UTC8)  # a Thursday
LEAP_DAY = datetime(2028, 2, 29, 12, 0, tzinfo=UTC)


def summary(match: TimeMatch, now: datetime) -> str:
    """A one-line picture of a match that also checks the shape every kind promises."""
    start, end = match.start, match.end
    assert start.tzinfo is now.tzinfo and end.tzinfo is now.tzinfo
    if match.kind == "moment":
        assert start == end
        return f"moment {start:%Y-%m-%d %H:%M}"
    if match.kind in ("day", "range"):
        assert start.time() == time(0, 0) and end.time() == time(23, 59, 59)
        span = f"{start:%Y-%m-%d}" if match.kind == "day" else f"{start:%Y-%m-%d} {end:%Y-%m-%d}"
        assert (match.kind == "day") == (start.date() == end.date())
        return f"{match.kind} {span}"
    assert start.date() == end.date() and end.second == 59
    return f"{match.kind} {start:%Y-%m-%d %H:%M}-{end:%H:%M}"


def found(text: str, now: datetime) -> list[tuple[str, str]]:
    return [(match.original, summary(match, now)) for match in resolve(text, now)]


ENGLISH = [
    (WED, "today", "day 2026-01-28"),
    (WED, "Today", "day 2026-01-28"),
    (WED, "tomorrow", "day 2026-01-29"),
    (WED, "yesterday", "day 2026-01-27"),
    (WED, "tonight", "evening 2026-01-28 18:00-23:59"),
    (WED, "last night", "evening 2026-01-27 18:00-23:59"),
    (WED, "tomorrow night", "evening 2026-01-29 18:00-23:59"),
    (WED, "tomorrow evening", "evening 2026-01-29 18:00-23:59"),
    (WED, "tomorrow morning", "morning 2026-01-29 06:00-11:59"),
    (WED, "yesterday afternoon", "afternoon 2026-01-27 12:00-17:59"),
    (WED, "this morning", "morning 2026-01-28 06:00-11:59"),
    (WED, "this afternoon", "afternoon 2026-01-28 12:00-17:59"),
    (WED, "this evening", "evening 2026-01-28 18:00-23:59"),
    (WED, "this weekend", "range 2026-01-31 2026-02-01"),
    (WED, "next weekend", "range 2026-02-07 2026-02-08"),
    (WED, "last weekend", "range 2026-01-24 2026-01-25"),
    (WED, "the weekend", "range 2026-01-31 2026-02-01"),
    (WED, "this week", "range 2026-01-26 2026-02-01"),
    (WED, "next week", "range 2026-02-02 2026-02-08"),
    (WED, "last week", "range 2026-01-19 2026-01-25"),
    (WED, "this month", "range 2026-01-01 2026-01-31"),
    (WED, "next month", "range 2026-02-01 2026-02-28"),
    (WED, "last month", "range 2025-12-01 2025-12-31"),
    (WED, "next year", "range 2027-01-01 2027-12-31"),
    (WED, "next Monday", "day 2026-02-02"),
    (WED, "next friday", "day 2026-02-06"),
    (WED, "last Friday", "day 2026-01-23"),
    (WED, "this Friday", "day 2026-01-30"),
    (WED, "this Monday", "day 2026-01-26"),
    (WED, "Monday", "day 2026-02-02"),
    (WED, "Thursday", "day 2026-01-29"),
    (WED, "Wednesday", "day 2026-02-04"),
    (WED, "Sunday", "day 2026-02-01"),
    (WED, "next Friday afternoon", "afternoon 2026-02-06 12:00-17:59"),
    (WED, "Saturday morning", "morning 2026-01-31 06:00-11:59"),
    (WED, "in 3 days", "day 2026-01-31"),
    (WED, "in two weeks", "day 2026-02-11"),
    (WED, "in eleven days", "day 2026-02-08"),
    (WED, "in 5 hours", "moment 2026-01-28 14:30"),
    (WED, "in twelve hours", "moment 2026-01-28 21:30"),
    (WED, "in an hour", "moment 2026-01-28 10:30"),
    (WED, "in half an hour", "moment 2026-01-28 10:00"),
    (WED, "in 30 minutes", "moment 2026-01-28 10:00"),
    (WED, "in 45 mins", "moment 2026-01-28 10:15"),
    (WED, "in 3 months", "day 2026-04-28"),
    (WED, "3 days ago", "day 2026-01-25"),
    (WED, "a week ago", "day 2026-01-21"),
    (WED, "2 hours ago", "moment 2026-01-28 07:30"),
    (WED, "ten minutes ago", "moment 2026-01-28 09:20"),
    (WED, "the day after tomorrow", "day 2026-01-30"),
    (WED, "the day before yesterday", "day 2026-01-26"),
    (WED, "end of the week", "day 2026-02-01"),
    (WED, "the end of the month", "day 2026-01-31"),
    (WED, "end of this year", "day 2026-12-31"),
    (SUN, "this weekend", "range 2026-11-21 2026-11-22"),
    (SUN, "next weekend", "range 2026-11-28 2026-11-29"),
    (SUN, "next Monday", "day 2026-11-23"),
    (SUN, "Sunday", "day 2026-11-29"),
    (MON, "next Monday", "day 2026-11-30"),
    (MON, "Monday", "day 2026-11-30"),
    (MON, "this Monday", "day 2026-11-23"),
    (MONTH_END, "tomorrow", "day 2026-02-01"),
    (MONTH_END, "in 1 month", "day 2026-02-28"),
    (MONTH_END, "next month", "range 2026-02-01 2026-02-28"),
    (MONTH_END, "in 3 hours", "moment 2026-02-01 01:45"),
    (YEAR_END, "tomorrow", "day 2027-01-01"),
    (YEAR_END, "in 30 minutes", "moment 2027-01-01 00:20"),
    (YEAR_END, "next week", "range 2027-01-04 2027-01-10"),
    (YEAR_END, "next month", "range 2027-01-01 2027-01-31"),
    (LEAP_DAY, "in a year", "day 2029-02-28"),
]

CHINESE = [
    (SUN, "今天", "day 2026-11-22"),
    (SUN, "明天", "day 2026-11-23"),
    (SUN, "后天", "day 2026-11-24"),
    (SUN, "大后天", "day 2026-11-25"),
    (SUN, "昨天", "day 2026-11-21"),
    (SUN, "前天", "day 2026-11-20"),
    (SUN, "大前天", "day 2026-11-19"),
    (SUN, "今晚", "evening 2026-11-22 18:00-23:59"),
    (SUN, "明晚", "evening 2026-11-23 18:00-23:59"),
    (SUN, "昨晚", "evening 2026-11-21 18:00-23:59"),
    (SUN, "今早", "morning 2026-11-22 06:00-11:59"),
    (SUN, "今天早上", "morning 2026-11-22 06:00-11:59"),
    (SUN, "明早", "morning 2026-11-23 06:00-11:59"),
    (SUN, "明天早上", "morning 2026-11-23 06:00-11:59"),
    (SUN, "明天上午", "morning 2026-11-23 06:00-11:59"),
    (SUN, "明天中午", "noon 2026-11-23 12:00-13:59"),
    (SUN, "明天下午", "afternoon 2026-11-23 12:00-17:59"),
    (SUN, "今天晚上", "evening 2026-11-22 18:00-23:59"),
    (SUN, "后天下午", "afternoon 2026-11-24 12:00-17:59"),
    (SUN, "周末", "range 2026-11-21 2026-11-22"),
    (SUN, "这周末", "range 2026-11-21 2026-11-22"),
    (SUN, "本周末", "range 2026-11-21 2026-11-22"),
    (SUN, "下周末", "range 2026-11-28 2026-11-29"),
    (SUN, "上周末", "range 2026-11-14 2026-11-15"),
    (SUN, "这周", "range 2026-11-16 2026-11-22"),
    (SUN, "本周", "range 2026-11-16 2026-11-22"),
    (SUN, "下周", "range 2026-11-23 2026-11-29"),
    (SUN, "下个星期", "range 2026-11-23 2026-11-29"),
    (SUN, "上周", "range 2026-11-09 2026-11-15"),
    (SUN, "下个月", "range 2026-12-01 2026-12-31"),
    (SUN, "本月", "range 2026-11-01 2026-11-30"),
    (SUN, "这个月", "range 2026-11-01 2026-11-30"),
    (SUN, "上个月", "range 2026-10-01 2026-10-31"),
    (SUN, "月底", "day 2026-11-30"),
    (SUN, "本月底", "day 2026-11-30"),
    (SUN, "年底", "day 2026-12-31"),
    (SUN, "明年", "range 2027-01-01 2027-12-31"),
    (SUN, "周一", "day 2026-11-23"),
    (SUN, "周三", "day 2026-11-25"),
    (SUN, "周日", "day 2026-11-29"),
    (SUN, "星期一", "day 2026-11-23"),
    (SUN, "星期六", "day 2026-11-28"),
    (SUN, "星期日", "day 2026-11-29"),
    (SUN, "星期天", "day 2026-11-29"),
    (SUN, "礼拜一", "day 2026-11-23"),
    (SUN, "礼拜天", "day 2026-11-29"),
    (SUN, "下周一", "day 2026-11-23"),
    (SUN, "下星期三", "day 2026-11-25"),
    (SUN, "下礼拜二", "day 2026-11-24"),
    (SUN, "上周五", "day 2026-11-13"),
    (SUN, "这周五", "day 2026-11-20"),
    (SUN, "下周一下午", "afternoon 2026-11-23 12:00-17:59"),
    (SUN, "周五晚上", "evening 2026-11-27 18:00-23:59"),
    (SUN, "3天后", "day 2026-11-25"),
    (SUN, "3天以后", "day 2026-11-25"),
    (SUN, "3天之后", "day 2026-11-25"),
    (SUN, "两天后", "day 2026-11-24"),
    (SUN, "三天后", "day 2026-11-25"),
    (SUN, "十天后", "day 2026-12-02"),
    (SUN, "十二天后", "day 2026-12-04"),
    (SUN, "2个小时后", "moment 2026-11-22 16:05"),
    (SUN, "五小时后", "moment 2026-11-22 19:05"),
    (SUN, "30分钟后", "moment 2026-11-22 14:35"),
    (SUN, "半小时后", "moment 2026-11-22 14:35"),
    (SUN, "半个小时以后", "moment 2026-11-22 14:35"),
    (SUN, "两周后", "day 2026-12-06"),
    (SUN, "两个星期后", "day 2026-12-06"),
    (SUN, "一个月后", "day 2026-12-22"),
    (SUN, "3个月后", "day 2027-02-22"),
    (SUN, "3天前", "day 2026-11-19"),
    (SUN, "十二天前", "day 2026-11-10"),
    (SUN, "一周前", "day 2026-11-15"),
    (SUN, "5分钟之前", "moment 2026-11-22 14:00"),
    (WED, "明天", "day 2026-01-29"),
    (WED, "下周一", "day 2026-02-02"),
    (WED, "周一", "day 2026-02-02"),
    (WED, "这周一", "day 2026-01-26"),
    (WED, "周末", "range 2026-01-31 2026-02-01"),
    (MON, "下周一", "day 2026-11-30"),
    (MONTH_END, "明天", "day 2026-02-01"),
    (YEAR_END, "明晚", "evening 2027-01-01 18:00-23:59"),
    (YEAR_END, "下个月", "range 2027-01-01 2027-01-31"),
]


@pytest.mark.parametrize(("now", "phrase", "expected"), ENGLISH)
def test_english_phrases(now: datetime, phrase: str, expected: str) -> None:
    assert found(f"Please check it {phrase}, thanks.", now) == [(phrase, expected)]


@pytest.mark.parametrize(("now", "phrase", "expected"), CHINESE)
def test_chinese_phrases(now: datetime, phrase: str, expected: str) -> None:
    assert found(f"请{phrase}帮我看看", now) == [(phrase, expected)]


def test_matches_come_in_order_of_appearance_with_their_positions() -> None:
    text = "Ship it tomorrow, 下周一 review, then in 3 hours deploy"
    matches = resolve(text, SUN)
    assert [match.original for match in matches] == ["tomorrow", "下周一", "in 3 hours"]
    assert [match.at for match in matches] == [text.index("tomorrow"), text.index("下周一"), text.index("in 3")]


@pytest.mark.parametrize(
    "phrase",
    ["next weekend", "this weekend", "the day after tomorrow", "tomorrow night", "next Friday afternoon",
     "下周末", "这周末", "大后天", "大前天", "下周一下午", "明天下午", "两天后", "本月底", "下个星期"],
)  # fmt: skip
def test_the_longest_phrase_wins_and_nothing_inside_it_matches_again(phrase: str) -> None:
    assert [match.original for match in resolve(f"({phrase})", SUN)] == [phrase]


def test_a_phrase_repeated_with_the_same_meaning_is_reported_once() -> None:
    matches = resolve("tomorrow or Tomorrow, 明天 or 明天", SUN)
    assert [(match.original, match.at) for match in matches] == [("tomorrow", 0), ("明天", 22)]


def test_a_phrase_broken_over_lines_is_one_line_in_the_block() -> None:
    matches = resolve("see you next\n  week", WED)
    assert [match.original for match in matches] == ["next\n  week"]
    assert describe(matches, WED).splitlines()[1] == '"next week" = 2026-02-02 Monday to 2026-02-08 Sunday'


@pytest.mark.parametrize(
    "text",
    [
        "on Mondays we deploy",
        "weekends are quiet",
        "see today_utils.py",
        "call get_tomorrow() first",
        "tomorrow() returns a date",
        "run it with --today",
        "open docs/tomorrow/plan.md",
        "edit Tomorrow.md",
        "the my-tomorrow-branch branch",
        "$today is set",
        "in days", "3 days", "in 1.5 hours", "in 1000 days",
        "`tomorrow` is the function name",
        "see ``next week`` in the docs",
        "```\nnext week we run\n```",
        "```python\nprint('tomorrow')",
        "一周一次", "每周一开会", "两周一次", "这周期很长", "看一下周报", "之前天气很好", "然后天就黑了",
        "1000天后", "第三天后", "1.5天后",
    ],
)  # fmt: skip
def test_code_identifiers_and_habits_are_not_time_expressions(text: str) -> None:
    assert resolve(text, SUN) == []


@pytest.mark.parametrize(
    ("text", "originals"),
    [
        ("it is today's build", ["today"]),
        ("Let's do it tomorrow.", ["tomorrow"]),
        ("Done by Monday's standup?", ["Monday"]),
        ("see you on Monday", ["Monday"]),
        ("`next` Monday", ["Monday"]),
        ("next `x` Monday", ["Monday"]),
        ("`today_utils.py` breaks today", ["today"]),
        ("TOMORROW!", ["tomorrow".upper()]),
        ("看一下周一的日志", ["周一"]),
        ("这周一次都没跑", ["这周"]),
        ("明天deploy", ["明天"]),
    ],
)
def test_words_next_to_punctuation_or_code_still_match(text: str, originals: list[str]) -> None:
    assert [match.original for match in resolve(text, SUN)] == originals


def test_describe_writes_one_line_per_phrase_after_the_clock() -> None:
    text = "tomorrow, this weekend, 今晚, in 3 hours, next month"
    assert describe(resolve(text, SUN), SUN) == (
        "Local time now: 2026-11-22 14:05 Sunday (UTC+08:00)\n"
        '"tomorrow" = 2026-11-23 Monday\n'
        '"this weekend" = 2026-11-21 Saturday to 2026-11-22 Sunday\n'
        '"今晚" = 2026-11-22 Sunday 18:00-23:59\n'
        '"in 3 hours" = 2026-11-22 17:05 Sunday\n'
        '"next month" = 2026-12-01 Tuesday to 2026-12-31 Thursday'
    )


@pytest.mark.parametrize(
    ("offset", "shown"),
    [(timedelta(hours=-5), "UTC-05:00"), (timedelta(0), "UTC+00:00"), (timedelta(hours=5, minutes=30), "UTC+05:30")],
)
def test_describe_shows_the_utc_offset(offset: timedelta, shown: str) -> None:
    now = datetime(2026, 1, 28, 9, 30, tzinfo=timezone(offset))
    assert describe([], now) == f"Local time now: 2026-01-28 09:30 Wednesday ({shown})"


def test_describe_escapes_the_phrase() -> None:
    match = TimeMatch("a<b & c", SUN, SUN, "moment", 0)
    assert describe([match], SUN).splitlines()[1] == '"a&lt;b &amp; c" = 2026-11-22 14:05 Sunday'


def test_hours_are_elapsed_time_across_a_dst_change() -> None:
    zoneinfo = pytest.importorskip("zoneinfo")
    try:
        new_york = zoneinfo.ZoneInfo("America/New_York")
    except zoneinfo.ZoneInfoNotFoundError:
        pytest.skip("no time zone database")
    before_spring_forward = datetime(2026, 3, 8, 1, 30, tzinfo=new_york)
    [in_one_hour, tomorrow] = resolve("in 1 hour and tomorrow", before_spring_forward)
    assert in_one_hour.start == datetime(2026, 3, 8, 3, 30, tzinfo=new_york)
    # Same-tzinfo subtraction is wall-clock in Python: compare in UTC to see the elapsed time.
    assert in_one_hour.start.astimezone(UTC) - before_spring_forward.astimezone(UTC) == timedelta(hours=1)
    assert tomorrow.start == datetime(2026, 3, 9, 0, 0, tzinfo=new_york)


def test_dates_beyond_the_calendar_are_left_out_not_raised() -> None:
    last_hour = datetime(9999, 12, 31, 23, 0, tzinfo=UTC8)
    assert [m.original for m in resolve("yesterday, tomorrow, next year, in 2 hours, 明天", last_hour)] == ["yesterday"]
    first_hour = datetime(1, 1, 1, 1, 0, tzinfo=UTC8)
    assert [m.original for m in resolve("tomorrow, in 5 hours, last week, 昨天", first_hour)] == ["tomorrow"]


def turn(text: str, now: datetime) -> TurnInput:
    return TurnInput(text=text, cwd=Path.cwd(), now=now, user_dir=Path.cwd())


def test_the_enricher_adds_one_p1_block_with_the_described_matches() -> None:
    text = "can you fix it by next Friday? 明晚 is too soon"
    [block] = time_expressions.enrich(turn(text, SUN))
    assert (block.name, block.priority, time_expressions.inline) == ("time", P1, True)
    assert block.text == describe(resolve(text, SUN), SUN)
    assert block.render() == (
        '<context name="time" priority="P1">\n'
        "Local time now: 2026-11-22 14:05 Sunday (UTC+08:00)\n"
        '"next Friday" = 2026-11-27 Friday\n'
        '"明晚" = 2026-11-23 Monday 18:00-23:59\n'
        "</context>"
    )
    assert isinstance(block, ContextBlock)


def test_the_enricher_skips_a_message_without_time_expressions() -> None:
    with pytest.raises(Skip, match="no relative time expressions"):
        time_expressions.enrich(turn("refactor `today_utils.py` please", SUN))


# --- invariants ---------------------------------------------------------------------------------------------

PHRASES = [phrase for _, phrase, _ in ENGLISH + CHINESE]
FILLER = [" ", "\n", ".", "_", "-", "/", "`", "```", "s", "x", "(", "每", "一", "个", "下", "第", "1", "in ", " ago"]
messages = st.lists(st.one_of(st.sampled_from(PHRASES + FILLER), st.text(max_size=6)), max_size=30).map("".join)
fixed_offsets = st.integers(-12 * 60, 14 * 60).map(lambda minutes: timezone(timedelta(minutes=minutes)))
any_time = st.datetimes(timezones=fixed_offsets)
ordinary_time = st.datetimes(datetime(1900, 1, 1), datetime(2200, 12, 31), timezones=fixed_offsets)


@given(messages, any_time)
def test_resolve_never_raises_and_reports_what_it_found_where_it_found_it(text: str, now: datetime) -> None:
    matches = resolve(text, now)
    for match in matches:
        assert match.original and text[match.at : match.at + len(match.original)] == match.original
        assert match.start <= match.end
    for earlier, later in zip(matches, matches[1:], strict=False):
        assert earlier.at + len(earlier.original) <= later.at
    describe(matches, now)


@given(ordinary_time)
def test_tomorrow_is_the_next_calendar_day(now: datetime) -> None:
    for phrase in ("tomorrow", "明天"):
        [match] = resolve(phrase, now)
        assert match.start == datetime.combine(now.date() + timedelta(days=1), time(0, 0), now.tzinfo)
        assert match.end == datetime.combine(now.date() + timedelta(days=1), time(23, 59, 59), now.tzinfo)


@given(ordinary_time)
def test_next_monday_is_a_monday_of_next_week(now: datetime) -> None:
    for phrase in ("next Monday", "下周一", "下星期一"):
        [match] = resolve(phrase, now)
        assert match.start.weekday() == 0
        assert 1 <= (match.start.date() - now.date()).days <= 13
        assert match.start.isocalendar()[:2] == (now + timedelta(weeks=1)).isocalendar()[:2]


@given(ordinary_time, st.sampled_from(["Friday", "周五", "星期五"]))
def test_a_bare_weekday_is_the_coming_one(now: datetime, phrase: str) -> None:
    [match] = resolve(phrase, now)
    assert match.start.weekday() == 4 and 1 <= (match.start.date() - now.date()).days <= 7


@given(ordinary_time)
def test_this_weekend_is_the_saturday_and_sunday_of_this_week(now: datetime) -> None:
    for phrase in ("this weekend", "周末"):
        [match] = resolve(phrase, now)
        assert (match.start.weekday(), match.end.weekday()) == (5, 6)
        assert match.start.isocalendar()[:2] == now.isocalendar()[:2]


SAME_MEANING = [
    ("tonight", "今晚"), ("tomorrow night", "明晚"), ("tomorrow morning", "明早"), ("the day after tomorrow", "后天"),
    ("the day before yesterday", "前天"), ("next weekend", "下周末"), ("last week", "上周"), ("next month", "下个月"),
    ("this Friday", "这周五"), ("last Sunday", "上周日"), ("in 3 days", "3天后"), ("in two hours", "两小时后"),
    ("in half an hour", "半小时后"), ("a week ago", "一周前"), ("end of the month", "月底"),
]  # fmt: skip


@given(ordinary_time, st.sampled_from(SAME_MEANING))
def test_english_and_chinese_phrases_with_the_same_meaning_agree(now: datetime, pair: tuple[str, str]) -> None:
    english, chinese = (resolve(phrase, now) for phrase in pair)
    assert [(m.start, m.end, m.kind) for m in english] == [(m.start, m.end, m.kind) for m in chinese]
    assert len(english) == 1
