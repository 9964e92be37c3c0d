"""Pages of support interactions and lessons learned (namespace "interactions")."""
from django.urls import path

from workloads.interactions.desk import views as interaction

app_name = "interactions"

urlpatterns = [
    path("interactions/", interaction.InteractionListView.as_view(), name="interaction_list"),
    path("interactions/new/", interaction.InteractionEditView.as_view(), name="interaction_add"),
    path("interactions/suggest-tags/", interaction.TagSuggestView.as_view(), name="interaction_suggest_tags"),
    path("interactions/<int:pk>/", interaction.InteractionView.as_view(), name="interaction_detail"),
    path("interactions/<int:pk>/edit/", interaction.InteractionEditView.as_view(), name="interaction_edit"),
    path("interactions/<int:pk>/comment/", interaction.CommentView.as_view(), name="interaction_comment"),
    path("interactions/<int:pk>/escalate/", interaction.EscalateView.as_view(), name="interaction_escalate"),
    path("interactions/<int:pk>/sync/", interaction.SyncView.as_view(), name="interaction_sync"),
    path("organizations/<slug:slug>/interactions/quick-log/", interaction.QuickLogView.as_view(),
         name="interaction_quick_log"),
    path("lessons/", interaction.LessonSearchView.as_view(), name="lesson_search"),
]
