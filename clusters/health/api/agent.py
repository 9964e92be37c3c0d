"""The controller agent's two routes (docs/DECISIONS.md 42), authenticated by the cluster's ingestion token like an
exporter's push: a long poll for the cluster's next work items and the result of one item. A token answers for its
own cluster only: another cluster's id in the URL is 404, as is another cluster's item."""
from __future__ import annotations

from django.http import Http404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from clusters.health.api.authentication import ClusterTokenAuthentication, HasClusterToken
from clusters.health.choices import WorkKind, WorkState
from clusters.health.models import AgentWorkItem, ClusterHealthConfig
from clusters.health.validation import agent
from portal.core.api.parsers import DepthLimitedJSONParser


class AgentPollSerializer(serializers.Serializer):
    wait = serializers.FloatField(required=False, min_value=0, help_text="Seconds to wait for work (capped by the "
                                                                          "portal's AGENT_POLL_SECONDS).")
    version = serializers.CharField(required=False, allow_blank=True, max_length=32)


class AgentWorkItemSerializer(serializers.ModelSerializer):
    kind = serializers.ChoiceField(choices=WorkKind.choices)

    class Meta:
        model = AgentWorkItem
        fields = ["id", "kind", "payload", "comment", "attempts", "created_at"]


class AgentWorkSerializer(serializers.Serializer):
    items = AgentWorkItemSerializer(many=True)


class AgentResultSerializer(serializers.Serializer):
    exit_status = serializers.IntegerField(min_value=-1, max_value=255)
    stdout = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False, default="")
    stderr = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False, default="")
    ran = serializers.BooleanField(required=False, default=True,
                                   help_text="False when the agent could not run the item (its reason in stderr).")


class AgentAnsweredSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    state = serializers.ChoiceField(choices=WorkState.choices)
    applied = serializers.BooleanField(help_text="False for a repeat: the item had its result already.")


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
