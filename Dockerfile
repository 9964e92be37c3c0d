FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY requirements.lock .
RUN pip install --no-cache-dir -r requirements.lock
COPY . .
RUN DJANGO_SETTINGS_MODULE=portal.settings.local python manage.py collectstatic --no-input
EXPOSE 8000
CMD ["gunicorn", "--config", "gunicorn.conf.py", "portal.wsgi:application"]
