"""The controller agent's two routes (docs/DECISIONS.md 42), authenticated by the cluster's ingestion token like an
exporter's push: a long poll for the cluster's next work items and the result of one item. A token answers for its
own cluster only: another cluster's id in the URL is 404, as is another cluster's item."""
from __future__ import annotations

from django.http import Http404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from clusters.health.api.authentication import ClusterTokenAuthentication, HasClusterToken
from clusters.health.api.serializers import (
    AgentAnsweredSerializer,
    AgentPollSerializer,
    AgentResultSerializer,
    AgentWorkSerializer,
)
from clusters.health.models import ClusterHealthConfig
from clusters.health.validation import agent
from portal.core.api.parsers import DepthLimitedJSONParser


def _own(request, cluster_id: int) -> ClusterHealthConfig:
    config: ClusterHealthConfig = request.auth
    if config.cluster_id != cluster_id:
        raise Http404("no such cluster for this token")
    return config


class AgentPollView(APIView):
    """The agent's long poll: its cluster's next work items (each claimed for AGENT_LEASE_SECONDS; one not answered
    by then is handed out again), waiting up to ``wait`` seconds for one to arrive; an empty list when none did."""

    authentication_classes = [ClusterTokenAuthentication]
    permission_classes = [HasClusterToken]
    parser_classes = [DepthLimitedJSONParser]

    @extend_schema(request=AgentPollSerializer, responses={
        200: AgentWorkSerializer, 401: OpenApiResponse(description="bad token"),
        404: OpenApiResponse(description="a token of another cluster")})
    def post(self, request, cluster_id: int):
        config = _own(request, cluster_id)
        asked = AgentPollSerializer(data=request.data)
        asked.is_valid(raise_exception=True)
        items = agent.poll(config, asked.validated_data.get("wait"), asked.validated_data.get("version", ""))
        return Response(AgentWorkSerializer({"items": items}).data)


class AgentResultView(APIView):
    """The agent's result of one item, applied once: a repeat (the agent restarted before it saw the answer) is
    answered 200 with ``applied`` false and changes nothing."""

    authentication_classes = [ClusterTokenAuthentication]
    permission_classes = [HasClusterToken]
    parser_classes = [DepthLimitedJSONParser]

    @extend_schema(request=AgentResultSerializer, responses={
        200: AgentAnsweredSerializer, 201: AgentAnsweredSerializer, 401: OpenApiResponse(description="bad token"),
        404: OpenApiResponse(description="no such item of this token's cluster")})
    def post(self, request, cluster_id: int, item_id: int):
        config = _own(request, cluster_id)
        result = AgentResultSerializer(data=request.data)
        result.is_valid(raise_exception=True)
        try:
            item, applied = agent.answer(config.cluster, item_id, **result.validated_data)
        except agent.Unknown as exc:
            raise Http404("no such work item of this cluster") from exc
        body = AgentAnsweredSerializer({"id": item.pk, "state": item.state, "applied": applied}).data
        return Response(body, status=status.HTTP_201_CREATED if applied else status.HTTP_200_OK)
