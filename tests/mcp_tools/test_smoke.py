import pytest

pytestmark = pytest.mark.django_db(transaction=True)


def test_list_deals_over_real_endpoint_is_empty_success(mcp):
    assert mcp.ok("list_deals") == {"deals": [], "total": 0, "has_more": False, "next_cursor": None}
