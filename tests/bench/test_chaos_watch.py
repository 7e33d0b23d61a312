"""What the chaos run counts as work done twice (its `duplicated_work` figure)."""
import pytest

from backend.archive import services
from backend.archive.models import ArchiveRequest, FileCopy
from bench.chaos.watch import duplicated_work
from tests.archive_fixtures import archived_collection, small_layout, staged_granule

pytestmark = pytest.mark.django_db


@pytest.fixture
def archived_file(data_root, settings):
    settings.GRANARY_WRITE_MAX_WAIT_S = 0
    primary, backup, _ = small_layout()
    collection = archived_collection([primary, backup])
    granule, sources = staged_granule(collection, data_root / "staging", sizes=(5000,))
    services.archive_granule(granule, sources)
    services.run_until_idle()
    return granule.files.get()


def _second_row(copy, state):
    copy.pk, copy.state, copy.segment = None, state, copy.segment + 1
    copy.save()


def test_two_counted_rows_of_one_segment_are_work_done_twice(archived_file):
    _second_row(FileCopy.objects.get(file=archived_file, copy_number=2), FileCopy.State.VERIFIED)
    assert duplicated_work() == {("copy", archived_file.pk, 2, 0)}


def test_a_bad_row_waiting_for_its_replacement_is_not(archived_file):
    _second_row(FileCopy.objects.get(file=archived_file, copy_number=2), FileCopy.State.BAD)
    assert duplicated_work() == set()



def test_a_copy_being_written_again_keeps_its_old_rows_until_it_is_whole(archived_file):
    copy = FileCopy.objects.get(file=archived_file, copy_number=1)
    moving = ArchiveRequest.objects.create(kind="migrate", priority=3, file=archived_file,
                                           copy_number=1,
                                           volume=copy.volume, bytes_total=archived_file.size)
    _second_row(copy, FileCopy.State.VERIFIED)             # its first segment, written
    assert duplicated_work() == set()
    ArchiveRequest.objects.filter(pk=moving.pk).update(state="done")
    assert duplicated_work() == {("copy", archived_file.pk, 1, 0)}   # done, both still count


def test_stuck_work_is_shown_row_by_row_and_the_verdict_can_be_written_as_json(archived_file):
    """A failed run's verdict names the stuck requests themselves (CI once showed only "1 stuck
    archive request"), and json.dumps takes them."""
    import json

    from bench.chaos.watch import stuck_examples, unfinished

    assert stuck_examples() == {}
    recall = ArchiveRequest.objects.create(kind="recall", priority=1, file=archived_file,
                                           bytes_total=archived_file.size, error="waiting")
    shown = json.loads(json.dumps(stuck_examples()))
    assert unfinished() == {"archive_requests": 1}
    [row] = shown["archive_requests"]
    assert (row["id"], row["kind"], row["state"], row["error"], row["file_id"]) == (
        recall.pk, "recall", "queued", "waiting", archived_file.pk)
    assert row["created_at"] == str(ArchiveRequest.objects.get(pk=recall.pk).created_at)


def test_a_ready_item_not_downloaded_of_a_staging_order_is_shown_but_not_counted(
        archived_file, django_user_model):
    """What holds an order staged in parts back (a ready part nobody downloaded) is shown in a
    failed run's verdict; the order's waiting items are what count as stuck."""
    from bench.chaos.watch import stuck_examples, unfinished
    from distribution.models import Order, OrderItem

    user = django_user_model.objects.create_user("chaos-user")
    order = Order.objects.create(user=user, state=Order.State.STAGING)
    held = OrderItem.objects.create(order=order, granule=archived_file.granule,
                                    file=archived_file, state=OrderItem.State.READY)
    assert unfinished() == {"orders": 1}
    [row] = stuck_examples()["undelivered_items"]
    assert (row["id"], row["state"], row["downloaded_at"]) == (held.pk, "ready", None)
    OrderItem.objects.filter(pk=held.pk).update(downloaded_at=order.created_at)
    assert "undelivered_items" not in stuck_examples()
