from django.urls import path

from portal.review import views

app_name = "review"

urlpatterns = [
    path("overview/", views.overview, name="overview"),
    path("overview/export/<slug:table>.csv", views.overview_csv, name="overview_csv"),
    path("reviews/", views.ReviewListView.as_view(), name="review_list"),
    path("reviews/freeze/", views.review_freeze, name="review_freeze"),
    path("reviews/<int:pk>/", views.review_detail, name="review_detail"),
    path("reviews/<int:pk>/print/", views.review_print, name="review_print"),
    path("reviews/<int:pk>/notes/", views.review_notes, name="review_notes"),
    path("reviews/<int:pk>/action-items/", views.actionitem_add, name="actionitem_add"),
    path("reviews/<int:pk>/review.pdf", views.review_pdf, name="review_pdf"),
    path("reviews/<int:pk>/export/<slug:table>.csv", views.review_csv, name="review_csv"),
    path("action-items/<int:pk>/done/", views.actionitem_done, name="actionitem_done"),
    path("overview/export/workbook.xlsx", views.overview_xlsx, name="overview_xlsx"),
    path("reviews/<int:pk>/export/workbook.xlsx", views.review_xlsx, name="review_xlsx"),
]
