"""Validation API: start a validation (``POST /api/health/validations/``, honouring ``Idempotency-Key``), list and
read jobs through the access policy, the plateau bus bandwidth trend, and the route a running job posts its
outputs to with its own token."""
from __future__ import annotations

from django.conf import settings
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.decorators import action as route
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from clusters.health.api.authentication import HasValidationJobToken, ValidationJobTokenAuthentication
from clusters.health.api.serializers import (
    ValidationJobSerializer,
    ValidationStartSerializer,
    ValidationTrendSerializer,
)
from clusters.health.ingest import service as services
from clusters.health.models import ValidationJob, ValidationRun
from clusters.health.readers import nccl
from clusters.health.validation import service as validation
from clusters.models import Cluster
from portal.core import submissions
from portal.core.api.base import PortalReadOnlyViewSet
from portal.core.generic import get_object


class ValidationJobViewSet(PortalReadOnlyViewSet):
    """NCCL validations started from the portal: state, verdict, the runs they recorded, a pairwise sweep's
    pairs and outliers."""

    queryset = (ValidationJob.objects.select_related("cluster__organization", "requested_by", "cancelled_by")
                .prefetch_related("runs"))
    serializer_class = ValidationJobSerializer
    filterset_fields = ["cluster", "state", "mode", "verdict"]
    ordering_fields = ["created_at"]

    def get_serializer_class(self):
        return ValidationStartSerializer if self.action == "create" else ValidationJobSerializer

    @extend_schema(request=ValidationStartSerializer, responses={201: ValidationJobSerializer,
                                                                 200: ValidationJobSerializer})
    @submissions.idempotent
    def create(self, request, *args, **kwargs):
        """Start a validation: 201 for a new job, 200 when the request lands on the cluster's open job or on the
        same ``Idempotency-Key``; 400 with the reason when it cannot start (cluster not ready, unknown nodes)."""
        serializer = ValidationStartSerializer(data=request.data, context=self.get_serializer_context())
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        key = request.headers.get(submissions.HEADER, "").strip()
        try:
            job, created = validation.start(data["cluster"], actor=request.user, collectives=data["collectives"],
                                            nodes=data["nodes"], pairwise_sweep=data["pairwise"],
                                            key=f"api:{request.user.pk}:{key}" if key else "",
                                            upload_base=request.build_absolute_uri("/"))
        except DjangoPermissionDenied as exc:
            raise PermissionDenied(str(exc)) from exc
        except validation.ValidationRefused as exc:
            raise ValidationError({"detail": str(exc)}) from exc
        job = self.queryset.get(pk=job.pk)
        return Response(ValidationJobSerializer(job, context=self.get_serializer_context()).data,
                        status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


    @extend_schema(request=None, responses={200: ValidationJobSerializer, 409: OpenApiResponse(
        description="The job is already finished (done, failed, timed out or cancelled).")})
    @route(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        """Cancel an open validation: it ends "cancelled" with who and when, and the worker sends ``scancel`` to its
        Slurm job on the head node. 409 when it had already finished (its own finish won the race)."""
        job = self.get_object()
        try:
            validation.cancel(job, request.user)
        except DjangoPermissionDenied as exc:
            raise PermissionDenied(str(exc)) from exc
        except validation.ValidationRefused as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        job = self.queryset.get(pk=job.pk)
        return Response(ValidationJobSerializer(job, context=self.get_serializer_context()).data)


class ValidationTrendView(APIView):
    """Plateau bus bandwidth of a cluster's runs, oldest first, and per (NCCL, aws-ofi-nccl) version its median and
    change from the previous version (``regression`` when it fell more than VALIDATION_REGRESSION_SHARE), so a
    regression after a software change shows. ``?collective=`` (all_reduce by default)."""

    @extend_schema(parameters=[OpenApiParameter("collective", str, required=False, enum=list(validation.OPERATIONS))],
                   responses={200: ValidationTrendSerializer})
    def get(self, request, cluster_id: int):
        cluster = get_object(request, Cluster.objects.all(), pk=cluster_id)
        collective = request.query_params.get("collective") or "all_reduce"
        if collective not in validation.OPERATIONS:
            raise ValidationError({"collective": f"One of {', '.join(validation.OPERATIONS)}."})
        # restrict: the cluster's runs beside it, each under the runs' own rule (an APIView has no ``visible``)
        runs = ValidationRun.objects.filter(cluster=cluster).restrict(request.user)
        return Response(ValidationTrendSerializer({"cluster": cluster.pk, **validation.trend(runs, collective)}).data)


class ValidationOutputView(APIView):
    """Where a running validation job posts each output (nccl-tests or nccom-test text, ``?collective=<name>``
    or ``?pair=<host>,<host>``), with the job's own token. Each expected output is taken once; the last one
    gives the job its verdict and ends the token. 401 for a bad, expired or used-up token; 400 for an output
    the job does not run or text the readers cannot read; 409 for an output already posted; 413 past
    HEALTH_VALIDATION_MAX_BYTES. A refused post writes nothing."""

    authentication_classes = [ValidationJobTokenAuthentication]
    permission_classes = [HasValidationJobToken]
    parser_classes: list = []  # the body is read here, in chunks, never through request.body

    @extend_schema(
        parameters=[OpenApiParameter("collective", str, required=False), OpenApiParameter("pair", str, required=False)],
        request={"text/plain": {"type": "string", "description": "nccl-tests or nccom-test output"}},
        responses={201: OpenApiResponse(description="taken: the part, the run it made, the job's state"),
                   400: OpenApiResponse(description="not an expected output, unreadable"),
                   401: OpenApiResponse(description="bad, expired or used-up token"),
                   409: OpenApiResponse(description="already posted"), 413: OpenApiResponse(description="too large")},
    )
    def post(self, request, pk: int):
        job: ValidationJob = request.auth
        max_bytes = settings.HEALTH_VALIDATION_MAX_BYTES
        length = request.headers.get("Content-Length")
        if length and length.isdigit() and int(length) > max_bytes:
            return Response({"detail": f"the output is over {max_bytes:,} bytes"},
                            status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)
        try:
            part = validation.part_of(job, request.query_params.get("collective", ""),
                                      request.query_params.get("pair", ""))
            body = services.read_body(request._request, max_bytes, gzipped=False)
            if not body.strip():
                return Response({"detail": "the output is empty"}, status=status.HTTP_400_BAD_REQUEST)
            received = validation.receive(job, part, body)
        except validation.OutputRejected as exc:
            return Response({"detail": str(exc)}, status=exc.status)
        except services.TooLarge as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)
        except nccl.NcclParseError as exc:
            return Response({"detail": f"the output could not be read: {exc}"}, status=status.HTTP_400_BAD_REQUEST)
        job = ValidationJob.objects.select_related("cluster__organization").prefetch_related("runs").get(pk=received.job.pk)
        data = {"part": part, "run": received.run.pk if received.run else None, "state": job.state,
                "received": job.received, "expected": len(job.expected), "verdict": job.verdict}
        return Response(data, status=status.HTTP_201_CREATED)
