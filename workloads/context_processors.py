"""What the navigation shows of the workloads app: the quota requests waiting for a decision."""
from workloads.choices import RequestStatus
from workloads.models import QuotaChangeRequest


def pending_quota_requests(request) -> dict:
    """How many quota requests wait for a decision (the program manager's navigation shows it). A callable,
    so the count query runs only on pages whose navigation displays it."""
    user = getattr(request, "user", None)
    cache: list[int] = []

    def count() -> int:
        if not cache:
            cache.append(QuotaChangeRequest.objects.restrict(user).filter(status=RequestStatus.PENDING).count())
        return cache[0]

    return {"pending_quota_requests": count}
